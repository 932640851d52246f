import Foundation

/// Renders the unsigned `samlp:Response` text with empty `ds:Signature` templates where the
/// options ask for signatures (right after the `Issuer`, where the SAML schema puts them).
struct ResponseTemplate {
    static let protocolNS = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertionNS = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let dsigNS = "http://www.w3.org/2000/09/xmldsig#"
    static let excC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
    static let enveloped = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    let options: IssueOptions
    let responseID: String
    let assertionID: String
    let signatureAlgorithm: SignatureAlgorithm
    let certificateBase64: String

    var issuer: String {
        options.issuer ?? IdPMetadata.defaultEntityID(mvpd: options.mvpd)
    }

    func render(paddingBytes: Int) -> String {
        let o = options
        let now = SAMLTimestamp.format(o.now)
        let notBefore = SAMLTimestamp.format(o.notBefore ?? o.now)
        let notOnOrAfter = SAMLTimestamp.format(o.notOnOrAfter ?? o.now.addingTimeInterval(o.ttl))
        let subjectNotOnOrAfter = SAMLTimestamp.format(o.subjectNotOnOrAfter ?? o.now.addingTimeInterval(o.ttl))
        let session = SAMLTimestamp.format(o.sessionNotOnOrAfter ?? o.now.addingTimeInterval(86_400))

        var w = XMLWriter(pretty: o.pretty)
        var responseAttrs: [(String, String)] = [
            ("xmlns:samlp", Self.protocolNS), ("xmlns:saml", Self.assertionNS),
            ("ID", responseID), ("Version", "2.0"), ("IssueInstant", now),
        ]
        if let destination = o.destination { responseAttrs.append(("Destination", destination)) }
        if let inResponseTo = o.inResponseTo { responseAttrs.append(("InResponseTo", inResponseTo)) }
        w.open("samlp:Response", responseAttrs)
        if !o.omitIssuer { w.leaf("saml:Issuer", issuer) }
        if o.sign == .response || o.sign == .both {
            w.raw(signatureTemplate(referenceURI: o.wholeDocumentReference ? "" : "#" + responseID, level: w.level))
        }
        w.open("samlp:Status")
        w.empty("samlp:StatusCode", [("Value", o.statusCode)])
        w.close("samlp:Status")

        w.open(
            "saml:Assertion",
            [
                ("xmlns:xs", "http://www.w3.org/2001/XMLSchema"), ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
                ("ID", assertionID), ("Version", "2.0"), ("IssueInstant", now),
            ])
        if !o.omitIssuer && !o.omitAssertionIssuer { w.leaf("saml:Issuer", issuer) }
        if o.sign == .assertion || o.sign == .both { w.raw(signatureTemplate(referenceID: assertionID, level: w.level)) }
        w.open("saml:Subject")
        w.leaf("saml:NameID", [("Format", "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent")], o.user)
        w.open("saml:SubjectConfirmation", [("Method", "urn:oasis:names:tc:SAML:2.0:cm:bearer")])
        var confirmation: [(String, String)] = o.omitExpiry ? [] : [("NotOnOrAfter", subjectNotOnOrAfter)]
        if let destination = o.destination { confirmation.append(("Recipient", destination)) }
        if let inResponseTo = o.inResponseTo { confirmation.append(("InResponseTo", inResponseTo)) }
        w.empty("saml:SubjectConfirmationData", confirmation)
        w.close("saml:SubjectConfirmation")
        w.close("saml:Subject")
        w.open("saml:Conditions", o.omitExpiry ? [("NotBefore", notBefore)] : [("NotBefore", notBefore), ("NotOnOrAfter", notOnOrAfter)])
        w.open("saml:AudienceRestriction")
        w.leaf("saml:Audience", o.audience)
        w.close("saml:AudienceRestriction")
        w.close("saml:Conditions")
        if !o.adviceSubjects.isEmpty {
            w.open("saml:Advice")
            for (index, subject) in o.adviceSubjects.enumerated() {
                w.open("saml:Assertion", [("ID", "\(assertionID)-advice\(index)"), ("Version", "2.0"), ("IssueInstant", now)])
                w.leaf("saml:Issuer", "https://advised.example")
                w.open("saml:Subject")
                w.leaf("saml:NameID", subject)
                w.close("saml:Subject")
                w.empty("saml:Conditions", [("NotBefore", notBefore), ("NotOnOrAfter", notOnOrAfter)])
                w.open("saml:AttributeStatement")
                w.raw(Self.attribute(SAMLAttribute(name: "advised", values: [subject]), pretty: o.pretty, level: w.level))
                w.close("saml:AttributeStatement")
                w.close("saml:Assertion")
            }
            w.close("saml:Advice")
        }
        w.open("saml:AuthnStatement", [("AuthnInstant", now), ("SessionIndex", "_s" + assertionID.dropFirst()), ("SessionNotOnOrAfter", session)])
        w.open("saml:AuthnContext")
        w.leaf("saml:AuthnContextClassRef", "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport")
        w.close("saml:AuthnContext")
        w.close("saml:AuthnStatement")
        w.open("saml:AttributeStatement")
        for attribute in o.attributes {
            w.raw(Self.attribute(attribute, pretty: o.pretty, level: w.level))
        }
        w.raw(Self.padding(bytes: paddingBytes, pretty: o.pretty, level: w.level))
        w.close("saml:AttributeStatement")
        w.close("saml:Assertion")
        w.close("samlp:Response")
        return w.text
    }

    static func attribute(_ attribute: SAMLAttribute, pretty: Bool, level: Int) -> String {
        var w = XMLWriter(pretty: pretty, level: level)
        w.open("saml:Attribute", [("Name", attribute.name), ("NameFormat", "urn:oasis:names:tc:SAML:2.0:attrname-format:basic")])
        for value in attribute.values {
            w.leaf("saml:AttributeValue", [("xsi:type", "xs:string")], value)
        }
        w.close("saml:Attribute")
        return w.text
    }

    /// Extra attributes totalling about `bytes` bytes of markup, to reach a target document size.
    static func padding(bytes: Int, pretty: Bool, level: Int) -> String {
        guard bytes > 0 else { return "" }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var out = ""
        var remaining = bytes
        var index = 0
        // Invariant: `out` renders exactly `bytes - remaining` bytes.
        while true {
            let name = "urn:samlgate:padding:\(index)"
            let overhead = attribute(SAMLAttribute(name, ""), pretty: pretty, level: level).utf8.count
            guard remaining > overhead else { break }
            let length = min(200, remaining - overhead)
            let value = String((0..<length).map { alphabet[($0 * 7 + index * 13) % alphabet.count] })
            let rendered = attribute(SAMLAttribute(name, value), pretty: pretty, level: level)
            out += rendered
            remaining -= rendered.utf8.count
            index += 1
        }
        return out
    }

    func signatureTemplate(referenceID: String, level: Int) -> String {
        signatureTemplate(referenceURI: "#" + referenceID, level: level)
    }

    func signatureTemplate(referenceURI: String, level: Int) -> String {
        let o = options
        let c14n = o.canonicalization
        var w = XMLWriter(lineBreaks: o.pretty || o.signedInfoLineBreaks, indentation: o.pretty, level: level)
        w.open("ds:Signature", [("xmlns:ds", Self.dsigNS)])
        w.open("ds:SignedInfo")
        w.empty("ds:CanonicalizationMethod", [("Algorithm", c14n.uri)])
        w.empty("ds:SignatureMethod", [("Algorithm", signatureAlgorithm.uri)])
        w.open("ds:Reference", [("URI", referenceURI)])
        w.open("ds:Transforms")
        w.empty("ds:Transform", [("Algorithm", Self.enveloped)])
        if o.implicitReferenceCanonicalization {
            // No canonicalization transform: inclusive C14N 1.0 by XML Signature's default.
        } else if c14n.isExclusive {
            w.open("ds:Transform", [("Algorithm", c14n.uri)])
            w.empty("ec:InclusiveNamespaces", [("xmlns:ec", Self.excC14N), ("PrefixList", "xs")])
            w.close("ds:Transform")
        } else {
            w.empty("ds:Transform", [("Algorithm", c14n.uri)])
        }
        w.close("ds:Transforms")
        w.empty("ds:DigestMethod", [("Algorithm", o.digestAlgorithm.uri)])
        w.leaf("ds:DigestValue", "")
        w.close("ds:Reference")
        w.close("ds:SignedInfo")
        w.leaf("ds:SignatureValue", "")
        if !signatureAlgorithm.isHMAC {
            switch o.keyInfo {
            case .x509Certificate:
                w.open("ds:KeyInfo")
                w.open("ds:X509Data")
                w.leaf("ds:X509Certificate", certificateBase64)
                w.close("ds:X509Data")
                w.close("ds:KeyInfo")
            case .keyValue:
                w.open("ds:KeyInfo")
                w.empty("ds:KeyValue")
                w.close("ds:KeyInfo")
            case .none:
                break
            }
        }
        w.close("ds:Signature")
        // Only the inside of the Signature may carry the extra line breaks: the text after it
        // belongs to the signed element.
        return o.pretty || !o.signedInfoLineBreaks ? w.text : String(w.text.dropLast())
    }
}
