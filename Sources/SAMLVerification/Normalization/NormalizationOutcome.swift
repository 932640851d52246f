/// How the document a verdict covers relates to the cookbook's normalization of the response
/// (see ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``).
public enum NormalizationOutcome: String, Sendable {
    /// Normalization changes no byte: there is one document, and it verified.
    case unchanged
    /// The normalized document verified on its own.
    case verified
    /// The signature does not survive normalization, the original verified, and the normalized
    /// document parses to the same tree (only whitespace in text differs): the normalized one
    /// is forwarded, its identity read from it.
    case equivalent
    /// The signature does not survive normalization and the original, verified, is forwarded
    /// as it is (``NormalizationFallback/original``).
    case original

    /// Which bytes the verdict covers and the caller forwards.
    public var forwardsOriginal: Bool { self == .original }

    /// Whether the IdP's signature verifies on the normalized document itself.
    public var signatureSurvives: Bool { self == .unchanged || self == .verified }
}
