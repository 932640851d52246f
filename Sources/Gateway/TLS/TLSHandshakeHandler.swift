import NIOCore
import NIOSSL
import NIOTLS

/// Why a TLS handshake failed (`samlgate_tls_handshake_failures_total{reason}`), read from
/// BoringSSL's reason string (swift-nio-ssl gives no code).
enum TLSHandshakeFailure: String, CaseIterable, Sendable {
    /// Plain HTTP sent to the TLS port.
    case httpRequest = "http_request"
    /// The client offered only TLS versions the profile refuses (SSLv3, TLS 1.0, 1.1; 1.2 with
    /// `tls-min-version: 1.3`), or no TLS at all.
    case protocolVersion = "protocol_version"
    /// No cipher suite or curve in common.
    case noSharedCipher = "no_shared_cipher"
    /// `tls-client-auth: require` and the client sent no certificate.
    case noClientCertificate = "no_client_certificate"
    /// The client's certificate does not chain to `tls-client-ca` (or has expired).
    case badClientCertificate = "bad_client_certificate"
    /// The client aborted with an alert (it did not trust the gateway's certificate, mostly).
    case clientAlert = "client_alert"
    /// The client closed the connection mid-handshake.
    case closed
    /// The handshake did not end within `header-timeout`.
    case timeout
    case other

    init(_ error: NIOSSLError) {
        guard case .handshakeFailed(let underlying) = error else {
            self = .other
            return
        }
        let text = String(describing: underlying)
        func has(_ word: String) -> Bool { text.contains(word) }
        if has("HTTP_REQUEST") || has("HTTPS_PROXY_REQUEST") {
            self = .httpRequest
        } else if has("WRONG_VERSION_NUMBER") || has("UNSUPPORTED_PROTOCOL") || has("VERSION_TOO_LOW") || has("UNKNOWN_PROTOCOL") {
            self = .protocolVersion
        } else if has("NO_SHARED_CIPHER") || has("NO_SHARED_GROUP") {
            self = .noSharedCipher
        } else if has("PEER_DID_NOT_RETURN_A_CERTIFICATE") {
            self = .noClientCertificate
        } else if has("CERTIFICATE_VERIFY_FAILED") {
            self = .badClientCertificate
        } else if has("ALERT") {
            self = .clientAlert
        } else if has("EOF") || has("eofDuringHandshake") {
            self = .closed
        } else {
            self = .other
        }
    }
}

/// The TLS listener's per-connection step between the handshake and HTTP: it bounds the
/// handshake in time (swift-nio-ssl has no clock of its own: a client that connects and sends
/// nothing would hold the connection forever), counts how it ended, reads the client's verified
/// certificate, and hands the connection to HTTP/2 or HTTP/1.1 as ALPN chose
/// (``ClientProtocol/configure(_:on:core:tls:)``), then leaves the pipeline.
final class TLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let core: GatewayCore
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    private var ended = false

    init(core: GatewayCore) {
        self.core = core
        timeout = TimeAmount(seconds: core.configuration.headerTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            guard !handler.ended else { return }
            handler.failed(.timeout)
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Shutting down before the handshake is done: no HTTP handler is there yet to drain the
        // connection, and no request of it is in flight.
        if event is ChannelShouldQuiesceEvent, !ended {
            ended = true
            timer?.cancel()
            context.close(promise: nil)
            return
        }
        guard let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event, !ended else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        ended = true
        timer?.cancel()
        let ssl = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
        let version: String =
            switch ssl?.tlsVersion {
            case .tlsv13: "1.3"
            case .tlsv12: "1.2"
            default: "other"
            }
        core.metrics.connections.handshake(version: "tls" + version, alpn: negotiated ?? "none")
        let session = TLSSession(
            version: version,
            certificate: ssl?.peerCertificate.flatMap(ServerTLS.names(of:)).map { ClientCertificate(subject: $0.subject, issuer: $0.issuer) })
        let chosen: ClientProtocol = negotiated == "h2" ? .http2 : .http1
        do {
            try context.pipeline.syncOperations.addHandler(TLSRecordCoalescer())
            try chosen.configure(context.channel, on: context.pipeline.syncOperations, core: core, tls: session)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // swift-nio-ssl closes the connection after a failed handshake itself.
        if !ended, let error = error as? NIOSSLError {
            failed(TLSHandshakeFailure(error))
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !ended { failed(.closed) }
        context.fireChannelInactive()
    }

    private func failed(_ reason: TLSHandshakeFailure) {
        ended = true
        timer?.cancel()
        core.metrics.connections.handshakeFailed(reason)
    }
}
