import NIOCore
import NIOPosix

/// Why a trip to a backend failed, what the gateway answers and whether it may retry.
package struct UpstreamFailure: Sendable, Error {
    package enum Kind: String, Sendable {
        /// The connection could not be made (refused, unreachable, connect timeout): nothing was sent.
        case connect
        /// No answer within the read or total timeout.
        case timeout
        /// The connection broke after the request may have been sent (reset, closed early).
        case broken
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

    /// Classifies an error on an established connection.
    static func broken(_ error: any Error) -> UpstreamFailure {
        if let io = error as? IOError { return .init(.broken, "I/O error \(io.errnoCode)") }
        return .init(.broken, String(describing: type(of: error)))
    }

    static let closed = UpstreamFailure(.broken, "connection closed by the backend")
    static let readTimeout = UpstreamFailure(.timeout, "read timeout")
    static let totalTimeout = UpstreamFailure(.timeout, "total timeout")

    var gatewayError: GatewayError {
        var error: GatewayError
        switch kind {
        case .timeout: error = .upstreamTimeout(summary)
        case .connect, .broken: error = .upstreamUnavailable(summary)
        }
        error.underlying = self
        return error
    }
}

extension UpstreamFailure.Kind {
    /// Timeouts can be one slow request; refusals and resets say the upstream is in trouble.
    var marksUnhealthy: Bool { self == .connect || self == .broken }
}
