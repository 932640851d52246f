/// XML canonicalization methods the test IdP can sign with (`SignedInfo` and the `Reference`).
///
/// Exclusive C14N is the SAML default and the test IdP's; inclusive C14N 1.0 and 1.1 are what
/// some identity providers use, and what a verifier must handle without loosening its other
/// defences (their signed bytes carry the namespaces of the signed element's ancestors).
public enum CanonicalizationAlgorithm: String, Sendable, CaseIterable {
    case exclusive
    case exclusiveWithComments
    case inclusive10
    case inclusive10WithComments
    case inclusive11
    case inclusive11WithComments

    public var uri: String {
        switch self {
        case .exclusive: return "http://www.w3.org/2001/10/xml-exc-c14n#"
        case .exclusiveWithComments: return "http://www.w3.org/2001/10/xml-exc-c14n#WithComments"
        case .inclusive10: return "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
        case .inclusive10WithComments: return "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
        case .inclusive11: return "http://www.w3.org/2006/12/xml-c14n11"
        case .inclusive11WithComments: return "http://www.w3.org/2006/12/xml-c14n11#WithComments"
        }
    }

    /// Exclusive C14N takes an `InclusiveNamespaces` prefix list; the inclusive methods read no child.
    public var isExclusive: Bool { self == .exclusive || self == .exclusiveWithComments }
}
