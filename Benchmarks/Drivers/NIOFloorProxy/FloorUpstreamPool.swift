import NIOCore
import NIOHTTP1
import NIOPosix

/// Idle keep-alive connections to the upstream, one pool per event loop, as the gateway keeps
/// them: an HTTP/2 stream's request takes one and gives it back at its answer's end.
final class FloorUpstreamPool {
    private let eventLoop: any EventLoop
    private let upstream: SocketAddress
    private var idle: [FloorUpstreamHandler] = []

    init(eventLoop: any EventLoop, upstream: SocketAddress) {
        self.eventLoop = eventLoop
        self.upstream = upstream
    }

    /// An open connection: a pooled one, or a new one once it is connected.
    func take(_ completion: @escaping (FloorUpstreamHandler?) -> Void) {
        while let connection = idle.popLast() {
            if connection.isActive { return completion(connection) }
        }
        let pool = NIOLoopBound(self, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(FloorUpstreamHandler(pool: pool.value))
                }
            }
            .connect(to: upstream)
            .assumeIsolated()
            .whenComplete { result in
                completion((try? result.get()).flatMap { try? $0.pipeline.syncOperations.handler(type: FloorUpstreamHandler.self) })
            }
    }

    func release(_ connection: FloorUpstreamHandler) {
        idle.append(connection)
    }
}

/// The pools of an event-loop group, one per loop, each used on its loop only.
final class FloorUpstreamPools: Sendable {
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<FloorUpstreamPool>]

    init(group: MultiThreadedEventLoopGroup, upstream: SocketAddress) {
        var pools: [ObjectIdentifier: NIOLoopBoundBox<FloorUpstreamPool>] = [:]
        for eventLoop in group.makeIterator() {
            pools[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue(
                FloorUpstreamPool(eventLoop: eventLoop, upstream: upstream), eventLoop: eventLoop)
        }
        self.pools = pools
    }

    /// The pool of `eventLoop` (its value read on that loop).
    func pool(on eventLoop: any EventLoop) -> NIOLoopBoundBox<FloorUpstreamPool> {
        pools[ObjectIdentifier(eventLoop)]!
    }
}
