import NIOCore
import NIOHTTP1

/// One HTTP/2 stream of the floor proxy (behind swift-nio-http2's HTTP/2-to-HTTP/1 codec): its
/// request parts go to a pooled upstream connection of its loop (held until it has one), flushed
/// once per batch of reads; the answer comes back through it.
final class FloorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let pool: FloorUpstreamPool
    private var upstream: FloorUpstreamHandler?
    private var taking = false
    private var held: [HTTPClientRequestPart] = []

    init(pool: FloorUpstreamPool) {
        self.pool = pool
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = FloorUpstreamHandler.requestPart(unwrapInboundIn(data))
        if case .head(var head) = part {
            // The codec's head is HTTP/2.0's and carries no `Host` (HTTP/2's `:authority`): the
            // upstream speaks HTTP/1.1, which wants one.
            head.version = .http1_1
            if !head.headers.contains(name: "host") { head.headers.add(name: "Host", value: "floor") }
            part = .head(head)
        }
        if let upstream {
            upstream.write(part)
            return
        }
        held.append(part)
        guard !taking else { return }
        taking = true
        let stream = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        pool.take { connection in
            guard let connection else { return stream.value.close(promise: nil) }
            handler.value.attach(connection, stream: stream.value)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        upstream?.flush()
        context.fireChannelReadComplete()
    }

    private func attach(_ connection: FloorUpstreamHandler, stream: ChannelHandlerContext) {
        upstream = connection
        connection.client = FloorChannelSink(stream)
        for part in held { connection.write(part) }
        held = []
        connection.flush()
    }
}
