import NIOCore
import NIOHTTP1

/// The floor proxy's connection to the upstream: request parts out, answer parts straight back
/// to the client's channel (same event loop), flushed at the answer's end. An HTTP/1.1 client
/// connection keeps one for itself; an HTTP/2 stream takes one from its loop's pool
/// (``FloorUpstreamPool``) and the answer's end gives it back.
final class FloorUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// Whom the answer goes to: the client connection, or the stream being answered.
    var client: ChannelHandlerContext?
    private let pool: FloorUpstreamPool?
    private var context: ChannelHandlerContext?

    /// - Parameter pool: where the connection goes back after each answer (`nil`: it is one client's).
    init(pool: FloorUpstreamPool?) {
        self.pool = pool
    }

    var isActive: Bool { context?.channel.isActive ?? false }

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
            client?.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        case .body(let body):
            client?.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        case .end(let trailers):
            client?.writeAndFlush(NIOAny(HTTPServerResponsePart.end(trailers)), promise: nil)
            if let pool {
                client = nil
                pool.release(self)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client?.close(promise: nil)
    }
}
