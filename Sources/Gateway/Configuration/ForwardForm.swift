/// What the gateway forwards upstream as `SAMLResponse`. In both forms the bytes forwarded
/// (after one percent- and base64-decoding) are a document the gateway verified itself.
@_spi(Benchmarks) public enum ForwardForm: String, Sendable, CaseIterable {
    /// Exactly what the cookbook produces: whitespace-normalized, base64, percent-encoded. The
    /// normalized document is what is verified. When normalization breaks the IdP's signature
    /// (typically a `SignedInfo` with line breaks), the original is verified instead and the
    /// normalized document is forwarded only if it parses to the same tree (whitespace in text
    /// aside), counted in `samlgate_equivalent_normalized_forwards_total`; otherwise
    /// `401 normalization_changes_document`.
    case cookbook
    /// Like `cookbook`, except when normalization breaks the IdP's signature: then the original
    /// response, verified as received, is base64- and percent-encoded *without* normalization,
    /// so whoever verifies after the gateway still can. Counted in
    /// `samlgate_signature_preserving_forwards_total`.
    case signaturePreserving = "signature-preserving"
}
