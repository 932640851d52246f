import Foundation

/// The per-request expectations the policies compare a response with.
struct PolicyContext {
    var now: Date
    var clockSkew: TimeInterval
    /// ``VerificationOptions/maxAssertionLifetime``.
    var maxLifetime: TimeInterval? = nil
    var audience: String
    var expectedIssuer: String?
    var expectedInResponseTo: String?
    var expectedDestination: String?
    /// Whether the Response element itself was signed. When only the Assertion is, values read
    /// from the Response (Issuer, Destination, InResponseTo) are attacker-controlled and must
    /// not satisfy a check.
    var responseSigned: Bool
}
