import NIOCore
import NIOHTTP1
import NIOPosix

/// One client connection of the floor proxy: its request parts go to its own upstream
/// connection as they arrive (held until that connection is open), flushed once per batch of
/// reads, as the gateway does.
final class FloorClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let upstreamAddress: SocketAddress
    private var upstream: FloorUpstreamHandler?
    private var connecting = false
    private var held: [HTTPClientRequestPart] = []

    init(upstream: SocketAddress) {
        upstreamAddress = upstream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = FloorUpstreamHandler.requestPart(unwrapInboundIn(data))
        if let upstream {
            upstream.write(part)
            return
        }
        held.append(part)
        if !connecting { connect(context: context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        upstream?.flush()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.close()
        context.fireChannelInactive()
    }

    private func connect(context: ChannelHandlerContext) {
        connecting = true
        let client = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let relay = FloorUpstreamHandler(pool: nil)
                    relay.client = FloorChannelSink(client.value)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(relay)
                    handler.value.attach(relay)
                }
            }
            .connect(to: upstreamAddress)
            .whenFailure { _ in client.value.close(promise: nil) }
    }

    private func attach(_ relay: FloorUpstreamHandler) {
        upstream = relay
        for part in held { relay.write(part) }
        held = []
        relay.flush()
    }
}
