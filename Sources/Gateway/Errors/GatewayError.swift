import SAMLEncoding
import SAMLVerification

/// A failure the gateway answers itself, in the backend's enhanced error shape.
///
/// `code` is stable (tests, metrics labels, clients); `message` is for people and never contains
/// SAML content, NameIDs, attribute values or device ids.
public struct GatewayError: Error, Sendable {
    public var status: Int
    public var code: String
    public var message: String
    /// Machine-readable context: `parameter`, `offset`, `retryAfter`, … (strings or integers).
    public var details: [(String, DetailValue)]
    public var action: ErrorAction
    /// Raised by the verifier (counted in `samlgate_verification_failures_total`).
    public var isVerificationFailure = false

    public enum DetailValue: Sendable {
        case string(String)
        case integer(Int)
    }

    public init(status: Int, code: String, message: String, details: [(String, DetailValue)] = [], action: ErrorAction = .none) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.action = action
    }

    /// `Retry-After` of `replay_cache_full`.
    static let replayCacheRetrySeconds = 5

    /// The value of a `Retry-After` header, when the error carries one.
    public var retryAfter: Int? {
        for case let (key, .integer(seconds)) in details where key == "retryAfter" { return seconds }
        return nil
    }

    public static func missingParameter(_ name: String) -> GatewayError {
        GatewayError(
            status: 400, code: "missing_parameter", message: "the required parameter \(name) is missing or empty",
            details: [("parameter", .string(name))])
    }

    public static func invalidParameter(_ name: String, _ why: String) -> GatewayError {
        GatewayError(
            status: 400, code: "invalid_parameter_value", message: "\(name): \(why)",
            details: [("parameter", .string(name))])
    }

    /// An exchange path with a method the backend does not serve there (answered with `Allow`).
    public static func methodNotAllowed(_ method: String) -> GatewayError {
        GatewayError(status: 405, code: "method_not_allowed", message: "the token-exchange path does not accept \(method)")
    }

    /// The client's body could not be read (broken chunking, a connection closed mid-body).
    public static let unreadableBody = GatewayError(status: 400, code: "malformed_request", message: "the request body could not be read")

    public static func bodyTooLarge(_ limit: Int) -> GatewayError {
        GatewayError(
            status: 413, code: "body_too_large", message: "the request body exceeds the \(limit)-byte limit",
            details: [("limit", .integer(limit))])
    }

    /// Every worker busy and the queue full (or the pool stopping during shutdown).
    public static func overloaded(shuttingDown: Bool = false) -> GatewayError {
        GatewayError(
            status: 503, code: "overloaded",
            message: shuttingDown ? "the gateway is shutting down" : "all verification workers are busy; retry shortly",
            details: [("retryAfter", .integer(1))], action: .retryAfter)
    }

    /// The shared replay store could not record the assertion and `replay-store-failure` is
    /// `closed`: nothing was forwarded, and the same response may be sent again shortly.
    public static let replayStoreUnavailable = GatewayError(
        status: 503, code: "replay_store_unavailable",
        message: "replay protection cannot be checked right now (the shared replay store is unavailable); retry shortly",
        details: [("retryAfter", .integer(SharedReplayStore.retrySeconds))], action: .retryAfter)

    public static func upstreamUnavailable(_ why: String) -> GatewayError {
        GatewayError(status: 502, code: "upstream_unavailable", message: "the backend could not be reached: \(why)", action: .retry)
    }

    public static func upstreamTimeout(_ why: String) -> GatewayError {
        GatewayError(status: 504, code: "upstream_timeout", message: "the backend did not answer in time: \(why)", action: .retry)
    }

    /// An encoding-core failure in the `SAMLResponse` value (always the client's input: 400).
    public init(_ error: SAMLEncodingError, parameter: String) {
        var details: [(String, DetailValue)] = [("parameter", .string(parameter))]
        if let offset = error.offset { details.append(("offset", .integer(offset))) }
        self.init(status: 400, code: error.code.rawValue, message: "\(parameter): \(error.message)", details: details)
    }

    /// A verifier failure: 401 for trust failures, 400 for malformed documents, 5xx for ours.
    public init(_ error: VerificationError) {
        let action: ErrorAction
        switch error.httpStatus {
        case 401: action = .authentication
        case 503: action = .retry
        default: action = .none
        }
        self.init(status: error.httpStatus, code: error.code.rawValue, message: error.message, action: action)
        if error.code == .replayCacheFull {
            // Live assertion ids leave the cache when their validity window closes; a client
            // told when to retry does not hammer a gateway that is refusing everything.
            details = [("retryAfter", .integer(Self.replayCacheRetrySeconds))]
            self.action = .retryAfter
        }
        isVerificationFailure = true
    }
}
