import NIOCore
import NIOHTTP1

/// The floor proxy's connection to the upstream: request parts out, answer parts straight back
/// to the client connection (same event loop), flushed at the answer's end.
final class FloorUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let client: ChannelHandlerContext
    private var context: ChannelHandlerContext?

    init(client: ChannelHandlerContext) {
        self.client = client
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func write(_ part: HTTPClientRequestPart) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() {
        context?.flush()
    }

    func close() {
        context?.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            client.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        case .body(let body):
            client.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        case .end(let trailers):
            client.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers)), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
    }
}
