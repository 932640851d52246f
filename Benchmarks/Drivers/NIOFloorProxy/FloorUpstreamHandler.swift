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
    var client: (any FloorAnswerSink)?
    private let pool: FloorUpstreamPool?
    private var context: ChannelHandlerContext?

    /// - Parameter pool: where the connection goes back after each answer (`nil`: it is one client's).
    init(pool: FloorUpstreamPool?) {
        self.pool = pool
    }

    var isActive: Bool { context?.channel.isActive ?? false }

    /// A client's request part as the upstream connection takes it.
    static func requestPart(_ part: HTTPServerRequestPart) -> HTTPClientRequestPart {
        switch part {
        case .head(let head): .head(head)
        case .body(let body): .body(.byteBuffer(body))
        case .end(let trailers): .end(trailers)
        }
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
            client?.head(head)
        case .body(let body):
            client?.body(body)
        case .end:
            client?.end()
            if let pool {
                client = nil
                pool.release(self)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client?.failed()
    }
}

/// Where an answer from the upstream goes: a client channel speaking HTTP/1 parts (an HTTP/1.1
/// connection, or a child channel's stream behind its codec), or a stream of a connection whose
/// streams are handled at the connection (``FloorConnectionStreams``).
protocol FloorAnswerSink: AnyObject {
    func head(_ head: HTTPResponseHead)
    func body(_ part: ByteBuffer)
    /// The answer is complete: flushed.
    func end()
    /// The upstream connection went away.
    func failed()
}

/// A channel whose pipeline takes HTTP/1 answer parts.
final class FloorChannelSink: FloorAnswerSink {
    private let context: ChannelHandlerContext

    init(_ context: ChannelHandlerContext) {
        self.context = context
    }

    func head(_ head: HTTPResponseHead) {
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
    }

    func body(_ part: ByteBuffer) {
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(part))), promise: nil)
    }

    func end() {
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
    }

    func failed() {
        context.close(promise: nil)
    }
}
