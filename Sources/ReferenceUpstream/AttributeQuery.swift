import Foundation

/// The profile request the backend hands the app for Apple's VSA framework
/// (`verificationToken`): a SAML `AttributeQuery` naming the attributes the MVPD must release,
/// base64-encoded. The app treats it as opaque; the TV provider answers it with the signed
/// attribute-query response the gateway later verifies.
enum AttributeQuery {
    static let adobeEntityID = "https://saml.sp.auth.adobe.com"

    static func make(id: String, mvpd: ReferenceMVPD, requestor: String, now: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        xml += "<samlp:AttributeQuery xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" "
        xml += "xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" ID=\"\(id)\" Version=\"2.0\" "
        xml += "IssueInstant=\"\(formatter.string(from: now))\" Destination=\"\(ReferenceReply.escapeHTML(mvpd.id))\">"
        xml += "<saml:Issuer>\(adobeEntityID)</saml:Issuer>"
        xml += "<saml:Subject><saml:NameID Format=\"urn:oasis:names:tc:SAML:2.0:nameid-format:unspecified\">"
        xml += ReferenceReply.escapeHTML(requestor) + "</saml:NameID></saml:Subject>"
        for name in mvpd.requiredMetadataFields {
            xml += "<saml:Attribute Name=\"\(ReferenceReply.escapeHTML(name))\" "
            xml += "NameFormat=\"urn:oasis:names:tc:SAML:2.0:attrname-format:basic\"/>"
        }
        xml += "</samlp:AttributeQuery>"
        return Data(xml.utf8).base64EncodedString()
    }
}
