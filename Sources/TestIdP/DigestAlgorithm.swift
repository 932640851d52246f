/// XML-DSig digest methods the test IdP can use.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256
    case sha512
    case sha1

    public var uri: String {
        switch self {
        case .sha256: return "http://www.w3.org/2001/04/xmlenc#sha256"
        case .sha512: return "http://www.w3.org/2001/04/xmlenc#sha512"
        case .sha1: return "http://www.w3.org/2000/09/xmldsig#sha1"
        }
    }
}
