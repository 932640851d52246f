/// XML-DSig signature methods the test IdP can use, including refused ones for negative tests.
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    case rsaSHA256
    case rsaSHA1
    case ecdsaSHA256
    case ecdsaSHA1
    /// Refused by the verifier (`algorithm_not_allowed`); signs with ``IssueOptions/hmacSecret``.
    case hmacSHA256

    public var uri: String {
        switch self {
        case .rsaSHA256: return "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
        case .rsaSHA1: return "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
        case .ecdsaSHA256: return "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
        case .ecdsaSHA1: return "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1"
        case .hmacSHA256: return "http://www.w3.org/2001/04/xmldsig-more#hmac-sha256"
        }
    }

    var isHMAC: Bool { self == .hmacSHA256 }
}
