import NIOCore
import NIOHTTP1
import NIOPosix

/// Why a trip to a backend failed, what the gateway answers and whether it may retry.
package struct UpstreamFailure: Sendable, Error, Equatable {
    package enum Kind: String, Sendable {
        /// The connection could not be made (refused, unreachable, connect timeout): nothing was sent.
        case connect
        /// No answer within the read or total timeout.
        case timeout
        /// The connection broke after the request may have been sent (reset, closed early).
        case broken
        /// The backend answered something the gateway cannot relay: a head over
        /// ``UpstreamConnectionPool/responseHeadLimits``, a status line or framing that is not
        /// HTTP/1.1, an answer nobody asked for, a protocol switch nobody asked for.
        case invalidResponse = "invalid_response"
        /// The trip's deadline passed while it waited on its client, not on the backend: the
        /// body was still arriving while the backend took all it was given, or the answer was
        /// held back because the client was not taking it. Never counted against the backend.
        case clientTimeout = "client_timeout"
    }

    let kind: Kind
    /// For the log and the error message: never contains the client's header values.
    let summary: String

    init(_ kind: Kind, _ summary: String) {
        self.kind = kind
        self.summary = summary
    }

    /// Classifies an error of connecting to a backend.
    static func connecting(_ error: any Error) -> UpstreamFailure {
        if let channel = error as? ChannelError, case .connectTimeout = channel { return .init(.connect, "connect timeout") }
        if error is NIOConnectionError { return .init(.connect, "connection refused or unreachable") }
        if let io = error as? IOError { return .init(.connect, "connect failed (I/O error \(io.errnoCode))") }
        return .init(.connect, "connect failed (\(String(describing: type(of: error))))")
    }

    /// Classifies an error on an established connection: the answer's parser refusing it is an
    /// invalid answer, anything else a broken connection.
    static func broken(_ error: any Error) -> UpstreamFailure {
        // The connection closed in the middle of the answer: broken, not malformed.
        if let parser = error as? HTTPParserError, parser == .invalidEOFState { return .init(.broken, "closed in the middle of the answer") }
        if let parser = error as? HTTPParserError {
            let why = parser == .headerOverflow ? "answer head over the limit" : "answer not valid HTTP/1.1 (\(parser))"
            return .init(.invalidResponse, why)
        }
        if error is NIOHTTPDecoderError { return .init(.invalidResponse, "an answer to no request") }
        if let io = error as? IOError { return .init(.broken, "I/O error \(io.errnoCode)") }
        return .init(.broken, String(describing: type(of: error)))
    }

    static let closed = UpstreamFailure(.broken, "connection closed by the backend")
    static let readTimeout = UpstreamFailure(.timeout, "read timeout")
    static let totalTimeout = UpstreamFailure(.timeout, "total timeout")
    static let switchedProtocols = UpstreamFailure(.invalidResponse, "the backend switched protocols unasked")
    static let clientTooSlow = UpstreamFailure(.clientTimeout, "the client's upload or reading outlasted total-timeout")

    var gatewayError: GatewayError {
        var error: GatewayError
        switch kind {
        case .timeout: error = .upstreamTimeout(summary)
        case .connect, .broken: error = .upstreamUnavailable(summary)
        case .invalidResponse: error = .upstreamResponseInvalid(summary)
        case .clientTimeout: error = .clientTimeout()
        }
        error.underlying = self
        return error
    }
}

extension UpstreamFailure.Kind {
    /// Whether the failure takes the endpoint out of rotation for the cool-down (and so can turn
    /// `/readyz` to 503): only a connection that could not be made. That says the endpoint cannot
    /// be reached whatever is sent to it, and no client can cause it — the connection is made
    /// before any byte of the request is known to the backend.
    ///
    /// Everything after the connection is made may be one request's doing: a head that
    /// reflects into an answer over the limit, a request that makes the backend reset or close
    /// (one with a smaller head limit than the gateway's may just drop the connection), a slow
    /// request. Counting those would let any client take every replica out of its load balancer
    /// with one request per cool-down. A backend that died is still seen: its in-flight
    /// connections break (not counted), and the next connection to it is refused (counted).
    /// Timeouts were never counted: one slow request says little about the next.
    var marksUnhealthy: Bool { self == .connect }

    /// Whether the failure is counted in `samlgate_upstream_errors_total`: everything but the
    /// client's own slowness.
    var isUpstreams: Bool { self != .clientTimeout }
}
