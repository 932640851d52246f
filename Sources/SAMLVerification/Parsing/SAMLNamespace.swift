/// Namespace URIs and names this module matches elements against.
///
/// Elements are always matched by namespace URI and local name, never by prefix.
enum SAMLNamespace {
    static let protocolNS: StaticString = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertionNS: StaticString = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let dsigNS: StaticString = "http://www.w3.org/2000/09/xmldsig#"
    static let metadataNS: StaticString = "urn:oasis:names:tc:SAML:2.0:metadata"

    static let statusSuccess = "urn:oasis:names:tc:SAML:2.0:status:Success"
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
}
