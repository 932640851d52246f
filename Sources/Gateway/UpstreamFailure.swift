import AsyncHTTPClient
import NIOCore
import NIOPosix

/// Classifies an AsyncHTTPClient error into what the gateway answers and whether it may retry.
public struct UpstreamFailure: Sendable {
    public enum Kind: String, Sendable {
        /// The connection could not be made (refused, unreachable, connect timeout): nothing was sent.
        case connect
        /// No answer within the read or total timeout.
        case timeout
        /// The connection broke after the request may have been sent (reset, closed early).
        case broken
        /// The client library refused the request as the client gave it (a header value it will
        /// not send, a `TRACE` with a body, a body shorter than its `Content-Length`): the
        /// client's fault, answered `400 invalid_request`, and no mark against the upstream —
        /// one such request must not take an upstream out of rotation.
        case request
    }

    /// AsyncHTTPClient's errors that say the request itself cannot be sent.
    static let requestErrors: [HTTPClientError] = [
        .invalidURL, .emptyHost, .emptyScheme, .traceRequestWithBody, .bodyLengthMismatch, .identityCodingIncorrectlyPresent,
        .contentLengthMissing, .requestStreamCancelled, .writeAfterRequestSent,
    ]

    let kind: Kind
    let summary: String

    init(_ error: any Error) {
        if let http = error as? HTTPClientError {
            let name = String(describing: http)
            if Self.requestErrors.contains(http) || name.contains("invalidHeaderField") || name.contains("unsupportedScheme") {
                // The description may hold the client's header values: never kept as the summary.
                (kind, summary) = (.request, "the request cannot be forwarded as given")
                return
            }
            switch http {
            case .connectTimeout: (kind, summary) = (.connect, "connect timeout")
            case .readTimeout: (kind, summary) = (.timeout, "read timeout")
            case .deadlineExceeded: (kind, summary) = (.timeout, "total timeout")
            case .remoteConnectionClosed: (kind, summary) = (.broken, "connection closed by the backend")
            default: (kind, summary) = (.broken, "\(http)")
            }
        } else if error is NIOConnectionError {
            (kind, summary) = (.connect, "connection refused or unreachable")
        } else if let channel = error as? ChannelError, case .connectTimeout = channel {
            (kind, summary) = (.connect, "connect timeout")
        } else if let io = error as? IOError {
            (kind, summary) = (io.errnoCode == ECONNREFUSED ? .connect : .broken, "I/O error \(io.errnoCode)")
        } else {
            (kind, summary) = (.broken, String(describing: type(of: error)))
        }
    }

    var gatewayError: GatewayError {
        switch kind {
        case .timeout: return .upstreamTimeout(summary)
        case .request: return GatewayError(status: 400, code: "invalid_request", message: summary)
        case .connect, .broken: return .upstreamUnavailable(summary)
        }
    }
}

extension UpstreamFailure.Kind {
    /// Timeouts can be one slow request; refusals and resets say the upstream is in trouble.
    var marksUnhealthy: Bool { self == .connect || self == .broken }
}
