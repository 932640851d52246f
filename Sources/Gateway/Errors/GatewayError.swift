import SAMLEncoding
import SAMLVerification
import ServerSupport

/// A failure the gateway answers itself.
///
/// `code` is samlgate's own reason, stable (tests, metrics labels, the log line, and the
/// `details` of the answer); the client gets it in the backend's vocabulary — the enhanced error
/// the backend documents for the case (see ``answer(api:exchange:showReason:)``). `message` is
/// for people and never contains SAML content, NameIDs, attribute values or device ids. Which
/// HTTP status each of the verifier's and encoder's codes answers is decided here, not by them:
/// the status the backend answers the same case with, or the one HTTP needs (413, 503, 504 …).
@_spi(Benchmarks) public struct GatewayError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The HTTP status of the answer.
    public var status: Int
    /// The gateway's own code (`ErrorCode+Gateway.swift`), or the encoder's or verifier's code
    /// of the failure it reports, taken as it is.
    public var code: ErrorCode
    public var message: String
    /// Machine-readable context: `parameter`, `header`, `offset`, `limit` (strings or integers);
    /// decides the backend's code of a parameter's refusal and is shown in `details`.
    public var details: [(String, Detail)]
    /// Seconds a client should wait before trying again: the `Retry-After` header, and
    /// `retryAfter=` in `details`.
    public var retryAfter: Int?
    /// The failure this refusal reports (a ``VerificationError``, a ``SAMLEncodingError``, the
    /// replay store's error), when it reports one.
    public var underlying: (any Error & Sendable)?
    /// Where the refusal was raised: the call site, also for the factories below (their
    /// `fileID`/`line` default to the caller's).
    public var location: ErrorLocation

    public init(
        status: Int, code: ErrorCode, message: String, details: [(String, Detail)] = [], retryAfter: Int? = nil,
        underlying: (any Error & Sendable)? = nil,
        fileID: String = #fileID, line: Int = #line
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retryAfter = retryAfter
        self.underlying = underlying
        self.location = ErrorLocation(fileID: fileID, line: line)
    }

    /// Raised by the verifier (counted in `samlgate_verification_failures_total`).
    public var isVerificationFailure: Bool { underlying is VerificationError }

    public var description: String { "\(code.rawValue): \(message)" }

    public var debugDescription: String {
        "\(status) \(code.rawValue): \(message) (\(location))" + (underlying.map { " caused by \(String(reflecting: $0))" } ?? "")
    }

    /// The parameter or header the refusal is about (`details.parameter` or `.header`).
    public var subject: String? {
        for (key, value) in details where key == "parameter" || key == "header" {
            if case .string(let name) = value { return name }
        }
        return nil
    }

    /// samlgate's reason with its context, for `details`: `signature_invalid`, or
    /// `body_too_large; limit=1048576` — the reason first, so a client can split it off.
    public var reasonDetails: String {
        var text = code.rawValue
        for (key, value) in details {
            switch value {
            case .string(let string): text += "; \(key)=\(string)"
            case .integer(let number): text += "; \(key)=\(number)"
            }
        }
        if let retryAfter { text += "; retryAfter=\(retryAfter)" }
        return text
    }

    /// `Retry-After` of `replay_cache_full`.
    static let replayCacheRetrySeconds = 5

    /// A required form field (`details.parameter`), or with `header` a required header
    /// (`details.header`), missing or empty.
    public static func missingParameter(_ name: String, header: Bool = false, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 400, code: .missingParameter, message: "the required \(header ? "header" : "parameter") \(name) is missing or empty",
            details: [(header ? "header" : "parameter", .string(name))], fileID: fileID, line: line)
    }

    /// A form field (or with `header` a header) whose value the backend would not accept.
    public static func invalidParameter(
        _ name: String, _ why: String, header: Bool = false, fileID: String = #fileID, line: Int = #line
    ) -> GatewayError {
        GatewayError(
            status: 400, code: .invalidParameterValue, message: "\(name): \(why)", details: [(header ? "header" : "parameter", .string(name))],
            fileID: fileID, line: line)
    }

    /// An exchange path with a method the backend does not serve there (answered with `Allow`).
    public static func methodNotAllowed(_ method: String, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 405, code: .methodNotAllowed, message: "the token-exchange path does not accept \(method)", fileID: fileID, line: line)
    }

    /// The client's body could not be read (broken chunking, a connection closed mid-body).
    public static let unreadableBody = GatewayError(status: 400, code: .malformedRequest, message: "the request body could not be read")

    public static func bodyTooLarge(_ limit: Int, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 413, code: .bodyTooLarge, message: "the request body exceeds the \(limit)-byte limit",
            details: [("limit", .integer(limit))], fileID: fileID, line: line)
    }

    /// Every worker busy and the queue full (or the pool stopping during shutdown).
    public static func overloaded(shuttingDown: Bool = false, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 503, code: .overloaded,
            message: shuttingDown ? "the gateway is shutting down" : "all verification workers are busy; retry shortly",
            retryAfter: 1, fileID: fileID, line: line)
    }

    /// A request for the API on the plain probe listener (`plain-port`): served over TLS only.
    static func tlsRequired(port: Int, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 403, code: .tlsRequired,
            message: "this listener serves /healthz, /readyz and /metrics only; the API is served over TLS",
            details: [("port", .integer(port))], fileID: fileID, line: line)
    }

    /// The client's token bucket is empty: `Retry-After` the whole seconds until its next
    /// token, at least one (the backend asks clients to wait a second after a 429).
    static func throttled(wait seconds: Double, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 429, code: .throttled, message: "too many requests from this client; retry after the time given",
            retryAfter: Int(min(max(1, seconds.rounded(.up)), 86_400)), fileID: fileID, line: line)
    }

    /// The shared replay store could not record the assertion and `replay-store-failure` is
    /// `closed`: nothing was forwarded, and the same response may be sent again shortly.
    static func replayStoreUnavailable(_ cause: any Error & Sendable, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 503, code: .replayStoreUnavailable,
            message: "replay protection cannot be checked right now (the shared replay store is unavailable); retry shortly",
            retryAfter: SharedReplayStore.retrySeconds, underlying: cause, fileID: fileID, line: line)
    }

    public static func upstreamUnavailable(_ why: String, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 502, code: .upstreamUnavailable, message: "the backend could not be reached: \(why)", fileID: fileID, line: line)
    }

    public static func upstreamTimeout(_ why: String, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 504, code: .upstreamTimeout, message: "the backend did not answer in time: \(why)", fileID: fileID, line: line)
    }

    /// The backend's answer to this request could not be relayed (a head over the limit, not
    /// HTTP/1.1). Not a sign the backend is down: the same request may get it again, another not.
    public static func upstreamResponseInvalid(_ why: String, fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 502, code: .upstreamResponseInvalid, message: "the backend's answer could not be relayed: \(why)", fileID: fileID,
            line: line)
    }

    /// The client sent its body, or took its answer, too slowly for `total-timeout`.
    public static func clientTimeout(fileID: String = #fileID, line: Int = #line) -> GatewayError {
        GatewayError(
            status: 408, code: .clientTimeout, message: "the request body did not arrive whole within total-timeout", fileID: fileID,
            line: line)
    }

    /// An encoding-core failure in the `SAMLResponse` value (always the client's input: 400).
    public init(_ error: SAMLEncodingError, parameter: String, fileID: String = #fileID, line: Int = #line) {
        var details: [(String, Detail)] = [("parameter", .string(parameter))]
        if let offset = error.offset { details.append(("offset", .integer(offset))) }
        self.init(
            status: 400, code: error.code, message: "\(parameter): \(error.message)", details: details, underlying: error,
            fileID: fileID, line: line)
    }

    /// A verifier failure: 400 for anything wrong with the response, forged, replayed or
    /// malformed (the backend answers a SAML response it does not accept so), 503 when the
    /// gateway's trust or replay cache is at fault (retry later), 500 for the libraries failing.
    public init(_ error: VerificationError, fileID: String = #fileID, line: Int = #line) {
        let status: Int
        var retryAfter: Int?
        switch error.code {
        case .internalError:
            status = 500
        case .replayCacheFull:
            // Live assertion ids leave the cache when their validity window closes; a client
            // told when to retry does not hammer a gateway that is refusing everything.
            (status, retryAfter) = (503, Self.replayCacheRetrySeconds)
        case .metadataExpired, .metadataUnavailable:
            status = 503
        default:
            status = 400
        }
        self.init(
            status: status, code: error.code, message: error.message, retryAfter: retryAfter, underlying: error, fileID: fileID,
            line: line)
    }
}

extension GatewayError {
    /// A value of the refusal's context (``GatewayError/details``).
    public enum Detail: Sendable {
        case string(String)
        case integer(Int)
    }
}
