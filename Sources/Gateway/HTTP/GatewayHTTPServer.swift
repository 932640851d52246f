import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServerSupport
import ServiceLifecycle

/// The gateway's HTTP/1.1 listener on SwiftNIO: one channel pipeline per client connection, on
/// the event loop that accepted it, ending in a ``GatewayConnectionHandler``.
///
/// The pipeline: NIO's HTTP/1.1 codec (request smuggling defences live in its parser: a
/// `Content-Length` beside `Transfer-Encoding`, two lengths, a bad chunk size are errors, and the
/// connection is closed after the `400`), then the gateway's handler, which also answers
/// pipelined requests in order, follows half-closes and quiescing, and keeps the idle and
/// header clocks (fewer handlers: every event of every request passes through each).
///
/// A service of the gateway's group: on graceful shutdown it stops accepting, lets every
/// connection finish the request in flight (idle ones are closed), then returns.
struct GatewayHTTPServer: Service {
    let core: GatewayCore
    let port: ListeningPort
    let eventLoopGroup: MultiThreadedEventLoopGroup

    /// Reads start at 16 KB: a typical API request (head and form body, ~11 KB for an exchange)
    /// then arrives in one read and goes upstream in one write; NIO's default starts at 2 KB and
    /// costs a read and a write per 2 KB until it adapts.
    static let readBuffers = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16_384, maximum: 65_536)

    func run() async throws {
        let core = self.core
        let quiesce = ServerQuiescingHelper(group: eventLoopGroup)
        var bootstrap = ServerBootstrap(group: eventLoopGroup)
        if let size = core.configuration.clientSendBuffer {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(size))
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
                let (client, refusal) = core.connections.admit(channel.remoteAddress)
                if let refusal {
                    core.metrics.connectionRefused(refusal)
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in core.connections.release(client) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
                    try pipeline.addHandler(GatewayConnectionHandler(core: core, pool: core.upstream.pool(on: channel.eventLoop)))
                }
            }
            .bind(host: core.configuration.host, port: core.configuration.port)
            .get()
        port.publish(channel.localAddress?.port ?? 0)
        try? await gracefulShutdown()
        let drained = eventLoopGroup.next().makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: drained)
        try await drained.futureResult.get()
    }
}
