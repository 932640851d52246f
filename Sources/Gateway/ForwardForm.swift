/// What the gateway forwards upstream as `SAMLResponse`.
public enum ForwardForm: String, Sendable, CaseIterable {
    /// Exactly what the cookbook produces: whitespace-normalized, base64, percent-encoded.
    case cookbook
    /// Like `cookbook`, except when normalization would break the IdP's signature (the verifier's
    /// `survivesNormalization` is false, typically a `SignedInfo` with line breaks): then the
    /// response is base64- and percent-encoded *without* normalization, so whoever verifies after
    /// the gateway still can. Counted in `samlgate_signature_preserving_forwards_total`.
    case signaturePreserving = "signature-preserving"
}
