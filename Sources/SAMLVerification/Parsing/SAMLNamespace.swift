import CXMLSec

/// Namespace URIs and names this module matches elements against.
///
/// Elements are always matched by namespace URI and local name, never by prefix.
enum SAMLNamespace {
    static let protocolNS: StaticString = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertionNS: StaticString = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let dsigNS: StaticString = "http://www.w3.org/2000/09/xmldsig#"
    static let metadataNS: StaticString = "urn:oasis:names:tc:SAML:2.0:metadata"

    /// XInclude 1.0 and its 2001 draft: an `include` element asks the reader to fetch and
    /// splice in other content.
    static let xinclude: StaticString = "http://www.w3.org/2001/XInclude"
    static let xincludeDraft: StaticString = "http://www.w3.org/2003/XInclude"

    static func isXInclude(_ href: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(href, xinclude) || XMLTree.equals(href, xincludeDraft)
    }

    /// The SAML assertion or protocol namespace.
    static func isSAML(_ href: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(href, assertionNS) || XMLTree.equals(href, protocolNS)
    }

    static let statusSuccess = "urn:oasis:names:tc:SAML:2.0:status:Success"
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
}
