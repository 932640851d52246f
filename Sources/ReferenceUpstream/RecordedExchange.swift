/// A token exchange exactly as it reached the backend (tests and demos check what the gateway
/// forwarded).
public struct RecordedExchange: Sendable {
    /// `v1` or `v2`.
    public var route: String
    public var requestor: String
    /// The `SAMLResponse` field exactly as it was in the body (before any decoding).
    public var samlResponse: String
    public var requestID: String?
}
