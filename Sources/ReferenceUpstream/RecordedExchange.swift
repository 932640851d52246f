/// A token exchange exactly as it reached the backend (tests and demos check what the gateway
/// forwarded).
package struct RecordedExchange: Sendable {
    /// `v1` or `v2`.
    package var route: String
    package var requestor: String
    /// The `SAMLResponse` field exactly as it was in the body (before any decoding).
    package var samlResponse: String
    package var requestID: String?
}
