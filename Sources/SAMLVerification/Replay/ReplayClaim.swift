import Foundation

/// What replay protection records for one accepted assertion: which assertion (``key``) and
/// until when it could be accepted (``expiresAt``).
///
/// The verifier derives it once, in one place, for its own ``ReplayCache`` and for callers
/// that keep the record elsewhere (the gateway's shared store, which must not be asked from a
/// worker thread): both then treat the same assertion as the same one.
public struct ReplayClaim: Sendable, Equatable {
    /// The signed issuer, a NUL, the assertion ID: the signer's identity and its assertion,
    /// never the caller-chosen MVPD name (several trust entries may trust one IdP, and a
    /// response without a signed Issuer is refused before a claim is made). Not personal, but
    /// callers storing it outside the process hash it.
    public let key: String
    /// The assertion's acceptance bound (`NotOnOrAfter`) plus the largest clock skew of the
    /// trust store (any MVPD trusting the same issuer may allow it): after this every MVPD's
    /// verifier refuses the assertion anyway, so the record can go.
    public let expiresAt: Date

    public init(key: String, expiresAt: Date) {
        self.key = key
        self.expiresAt = expiresAt
    }
}
