import Foundation

/// The per-request expectations the policies compare a response with.
struct PolicyContext {
    var now: Date
    var clockSkew: TimeInterval
    var audience: String
    var expectedIssuer: String?
    var expectedInResponseTo: String?
    var expectedDestination: String?
}
