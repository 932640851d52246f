import CXMLSec

/// A `SignatureMethod` ``NativeSignature`` checks itself: RSA PKCS#1 v1.5 or ECDSA over a SHA
/// digest. Which of them a response may use is ``AlgorithmPolicy``'s decision, made before.
struct NativeSignatureMethod {
    let ecdsa: Bool
    let digest: cxmlsec_digest

    private static let known: [(uri: StaticString, ecdsa: Bool, digest: cxmlsec_digest)] = [
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", false, CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha384", false, CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha512", false, CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2000/09/xmldsig#rsa-sha1", false, CXMLSEC_DIGEST_SHA1),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256", true, CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384", true, CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512", true, CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1", true, CXMLSEC_DIGEST_SHA1),
    ]

    private static let digests: [(uri: StaticString, digest: cxmlsec_digest)] = [
        ("http://www.w3.org/2001/04/xmlenc#sha256", CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#sha384", CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmlenc#sha512", CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2000/09/xmldsig#sha1", CXMLSEC_DIGEST_SHA1),
    ]

    /// The signature method `uri` names, or `nil`.
    init?(uri: UnsafePointer<xmlChar>?) {
        guard let entry = Self.known.first(where: { XMLTree.equals(uri, $0.uri) }) else { return nil }
        ecdsa = entry.ecdsa
        digest = entry.digest
    }

    /// The digest a `DigestMethod` `uri` names, or `nil`.
    static func digest(uri: UnsafePointer<xmlChar>?) -> cxmlsec_digest? {
        digests.first(where: { XMLTree.equals(uri, $0.uri) })?.digest
    }
}
