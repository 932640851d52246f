import Logging
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import ServerSupport
import ServiceLifecycle

/// One of the gateway's listeners on SwiftNIO: one channel pipeline per client connection, on
/// the event loop that accepted it, ending in a ``GatewayConnectionHandler`` per HTTP/1.1
/// connection or HTTP/2 stream (``ClientProtocol``).
///
/// The client listener (`port`) serves plain HTTP/1.1 (with `h2c`, HTTP/2 with prior knowledge
/// beside it: ``HTTP2PrefaceSniffer``), or TLS with `tls-certificate` (``ServerTLS``: each new
/// connection takes the context current at its accept, so a reload never touches an open one;
/// ALPN chooses `h2` or `http/1.1`: ``TLSHandshakeHandler``). The probe listener (`plain-port`,
/// with TLS on) serves `/healthz`, `/readyz` and `/metrics` over plain HTTP/1.1, nothing else.
///
/// HTTP/1.1 runs through NIO's codec (request smuggling defences live in its parser: a
/// `Content-Length` beside `Transfer-Encoding`, two lengths, a bad chunk size are errors, and
/// the connection is closed after the `400`), then the gateway's handler.
///
/// A service of the gateway's group: on graceful shutdown it stops accepting, lets every
/// connection finish the request in flight (idle ones are closed; HTTP/2 ones get a GOAWAY),
/// then returns.
struct GatewayHTTPServer: Service {
    /// What a listener serves.
    enum Role {
        case clients(tls: ServerTLS?)
        /// `plain-port`: the probes and the scrape only.
        case probes

        /// How a connection over the listener's total cap is counted.
        var refusal: ConnectionCaps.Refusal {
            switch self {
            case .clients: .total
            case .probes: .probes
            }
        }
    }

    let core: GatewayCore
    let role: Role
    let port: ListeningPort
    let eventLoopGroup: MultiThreadedEventLoopGroup

    /// Reads start at 16 KB: a typical API request (head and form body, ~11 KB for an exchange)
    /// then arrives in one read and goes upstream in one write; NIO's default starts at 2 KB and
    /// costs a read and a write per 2 KB until it adapts.
    static let readBuffers = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16_384, maximum: 65_536)

    func run() async throws {
        let core = self.core
        let role = self.role
        let quiesce = ServerQuiescingHelper(group: eventLoopGroup)
        var bootstrap = ServerBootstrap(group: eventLoopGroup)
        if let size = core.configuration.clientSendBuffer {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(size))
        }
        let listenPort: Int
        switch role {
        case .clients: listenPort = core.configuration.port
        case .probes: listenPort = core.configuration.plainPort ?? 0
        }
        let channel =
            try await bootstrap
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.recvAllocator, value: Self.readBuffers)
            .childChannelInitializer { channel in
                // The probe listener counts apart: probes and scrapes are answered when clients fill theirs.
                let caps: ConnectionCaps
                switch role {
                case .clients: caps = core.connections
                case .probes: caps = core.probeConnections
                }
                let (client, refusal) = caps.admit(channel.remoteAddress, refusing: role.refusal)
                if let refusal {
                    core.metrics.connectionRefused(refusal)
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in caps.release(client) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    switch role {
                    case .clients(let tls?):
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls.context))
                        try pipeline.addHandler(TLSHandshakeHandler(core: core))
                    case .clients(nil) where core.configuration.h2c:
                        try pipeline.addHandler(HTTP2PrefaceSniffer(core: core))
                    case .clients(nil):
                        try ClientProtocol.http1.configure(channel, on: pipeline, core: core, tls: nil)
                    case .probes:
                        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
                        try pipeline.addHandler(
                            GatewayConnectionHandler(core: core, eventLoop: channel.eventLoop, probesOnly: true))
                    }
                }
            }
            .bind(host: core.configuration.host, port: listenPort)
            .get()
        port.publish(channel.localAddress?.port ?? 0)
        try? await gracefulShutdown()
        let drained = eventLoopGroup.next().makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: drained)
        try await drained.futureResult.get()
    }
}
