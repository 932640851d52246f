import NIOCore
import SAMLEncoding

/// The outcome of the SAML work for one exchange: the body to forward and what to count.
public struct PreparedExchange: Sendable {
    /// The form body for the upstream: the client's fields byte for byte, with `SAMLResponse`
    /// replaced by its encoded form.
    public var upstreamBody: ByteBuffer
    public var mvpd: String
    /// The form the client sent `SAMLResponse` in.
    public var form: SAMLForm
    /// Whether the IdP's signature survives the cookbook's normalization (`nil`: not computed).
    public var survivesNormalization: Bool?
    /// True when the un-normalized encoding was forwarded (`signature-preserving`).
    public var forwardedUnnormalized: Bool
    /// Stage timings in nanoseconds, for the latency histograms.
    public var parseNanos: UInt64
    public var verifyNanos: UInt64
    public var encodeNanos: UInt64
}
