import NIOCore
import SAMLEncoding
import SAMLVerification

/// The outcome of the SAML work for one exchange: the body to forward and what to count.
@_spi(Benchmarks) public struct PreparedExchange: Sendable {
    /// The form body for the upstream: the client's fields byte for byte, with `SAMLResponse`
    /// replaced by its encoded form.
    public var upstreamBody: ByteBuffer
    public var mvpd: String
    /// The form the client sent `SAMLResponse` in.
    public var form: SAMLForm
    /// Which document was verified and forwarded: the normalized one, or (`signature-preserving`,
    /// when normalization breaks the signature) the original.
    public var normalization: NormalizationOutcome
    /// ``TrustedKey/shortFingerprint`` of the key that verified the signature.
    public var keyFingerprint: String
    /// What the shared replay store must record before the exchange is forwarded (already
    /// recorded by the verifier when the processor has an in-process ``ReplayCache``).
    public var replayClaim: ReplayClaim?
    /// Stage timings in nanoseconds, for the latency histograms.
    public var parseNanos: UInt64
    public var verifyNanos: UInt64
    public var encodeNanos: UInt64
    /// In report-only mode: the refusal enforcing would have answered. The body is then the
    /// client's fields with `SAMLResponse` encoded the cookbook's way from the normalized
    /// document (or, when it could not be decoded, the client's body unchanged), and
    /// ``normalization``, ``keyFingerprint`` and ``replayClaim`` say nothing.
    public var wouldRefuse: GatewayError?
    /// With an audit trail: the hex SHA-256 of the replay claim's key (``AuditDigest``).
    public var assertionHash: String?
    /// With an audit key: the hex HMAC of the NameID (``AuditKey``), never the NameID itself.
    public var subjectHMAC: String?

    /// Report-only: `body` goes to the backend although enforcing would refuse with `refusal`;
    /// nothing was verified, so the verified facts are left empty.
    static func reported(
        _ body: ByteBuffer, refusal: GatewayError, mvpd: String, form: SAMLForm, parseNanos: UInt64 = 0, verifyNanos: UInt64 = 0,
        encodeNanos: UInt64 = 0
    ) -> PreparedExchange {
        PreparedExchange(
            upstreamBody: body, mvpd: mvpd, form: form, normalization: .unchanged, keyFingerprint: "", replayClaim: nil,
            parseNanos: parseNanos, verifyNanos: verifyNanos, encodeNanos: encodeNanos, wouldRefuse: refusal)
    }
}
