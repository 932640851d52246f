import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// An HTTP/2 stream's frames as the HTTP/1-style request parts the gateway's handler reads, and
/// its answer's parts as frames, in place of swift-nio-http2's `HTTP2FramePayloadToHTTP1ServerCodec`
/// for what that codec lets through:
///
/// - **The head read strictly** (``HTTPRequestHead/init(http2:endStream:)``): a request the
///   gateway would forward otherwise than an HTTP/1.1 backend reads it is refused on its stream
///   (``HTTP2MalformedRequest``: the handler answers `400`/`431` with the error's code, and the
///   streams beside it go on).
/// - **Nothing complete upstream before the stream proves valid.** The last DATA frame received
///   is held until the next one or the end of the stream, so a stream that turns out malformed
///   at its end (DATA past its `content-length`, trailers that are not) is reset with its request
///   one frame short at the backend: never a complete request the client's stream disowns. The
///   cost is one frame (16 KiB at most) per uploading stream, held until its next frame.
/// - **One client's streams bounded** (`max-streams-per-client`, ``ConnectionCaps``): a stream
///   beyond its client's cap is refused with `REFUSED_STREAM` (the client may retry it) before it
///   reaches a backend.
/// - **A half-closed connection's unfinished requests dropped**: a stream whose request is not
///   whole when the client stops sending can never be; it ends, and its backend connection with
///   it (``HTTP2Streams/clientInputClosed()``).
/// - **Answers counted** against the connection's ``HTTP2AnswerBudget`` until they are written out.
final class HTTP2RequestTranslator: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum Phase {
        /// No HEADERS yet.
        case head
        /// The head passed on, its body arriving.
        case body
        /// The request is whole.
        case ended
        /// Refused: whatever else the client sends on the stream is dropped.
        case dropping
    }

    private let streams: HTTP2Streams
    private var phase = Phase.head
    /// The last DATA received, passed on when the next one comes or the stream ends.
    private var held: ByteBuffer?
    /// Counted in the client's open streams (released when the stream goes).
    private var admitted = false
    private var context: ChannelHandlerContext?

    init(streams: HTTP2Streams) {
        self.streams = streams
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        streams.opened(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        streams.closed(self)
        if admitted { streams.caps.releaseStream(streams.client) }
        admitted = false
        held = nil
        self.context = nil
    }

    // MARK: - the request

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            switch phase {
            case .head: head(headers, context: context)
            case .body:
                // Trailers (swift-nio-http2 has checked they end the stream and hold no pseudo-header).
                passHeld(context)
                phase = .ended
                context.fireChannelRead(wrapInboundOut(.end(HTTPHeaders(headers.headers.map { ($0.name, $0.value) }))))
            case .ended, .dropping: break
            }
        case .data(let frame):
            guard phase == .body, case .byteBuffer(let bytes) = frame.data else { return }
            if frame.endStream {
                passHeld(context)
                if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(bytes))) }
                phase = .ended
                context.fireChannelRead(wrapInboundOut(.end(nil)))
            } else if bytes.readableBytes > 0 {
                passHeld(context)
                held = bytes
            }
        default:
            break
        }
    }

    private func head(_ headers: HTTP2Frame.FramePayload.Headers, context: ChannelHandlerContext) {
        guard streams.caps.admitStream(streams.client) else {
            phase = .dropping
            streams.metrics.http2StreamReset(.clientLimit)
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            return
        }
        admitted = true
        do {
            let head = try HTTPRequestHead(http2: headers.headers, endStream: headers.endStream)
            phase = headers.endStream ? .ended : .body
            context.fireChannelRead(wrapInboundOut(.head(head)))
            if headers.endStream { context.fireChannelRead(wrapInboundOut(.end(nil))) }
        } catch {
            phase = .dropping
            context.fireUserInboundEventTriggered(HTTP2MalformedRequest(error: error))
            context.fireChannelRead(wrapInboundOut(.head(Self.refusedHead(headers.headers))))
            context.fireChannelRead(wrapInboundOut(.end(nil)))
        }
    }

    private func passHeld(_ context: ChannelHandlerContext) {
        guard let part = held else { return }
        held = nil
        context.fireChannelRead(wrapInboundOut(.body(part)))
    }

    /// The client half-closed its connection: a request not yet whole never will be.
    func clientInputClosed() {
        guard phase == .body, let context else { return }
        phase = .dropping
        held = nil
        context.close(promise: nil)
    }

    /// What a refused request is recorded as: its method and path when they are readable, no
    /// header but those the refusal's rendering reads.
    private static func refusedHead(_ fields: HPACKHeaders) -> HTTPRequestHead {
        let method = fields.first(name: ":method").flatMap { HTTPRequestHead.isToken($0) ? $0 : nil } ?? "-"
        let path = fields.first(name: ":path").flatMap { $0.utf8.first == UInt8(ascii: "/") ? $0 : nil } ?? "/"
        var headers = HTTPHeaders()
        for name in ["accept", "x-request-id"] { if let value = fields.first(name: name) { headers.add(name: name, value: value) } }
        return HTTPRequestHead(version: HTTPVersion(major: 2, minor: 0), method: HTTPMethod(rawValue: method), uri: path, headers: headers)
    }

    // MARK: - the answer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            var fields = HTTPHeaders([(":status", String(head.status.code))])
            fields.add(contentsOf: head.headers)
            context.write(wrapOutboundOut(.headers(.init(headers: HPACKHeaders(httpHeaders: fields, normalizeHTTPHeaders: true)))), promise: promise)
        case .body(.byteBuffer(let bytes)):
            let part = HTTP2AnswerBudget.compacted(bytes, allocator: context.channel.allocator)
            let count = part.readableBytes
            let budget = streams.budget
            budget.hold(count)
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.assumeIsolated().whenComplete { _ in budget.release(count) }
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(part)))), promise: written)
        case .body(.fileRegion):
            promise?.fail(ChannelError.operationUnsupported)
        case .end(let trailers?):
            context.write(
                wrapOutboundOut(.headers(.init(headers: HPACKHeaders(httpHeaders: trailers, normalizeHTTPHeaders: true), endStream: true))),
                promise: promise)
        case .end(nil):
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))), promise: promise)
        }
    }
}

/// Fired by ``HTTP2RequestTranslator`` before the head of a request it refuses: the handler
/// answers the head that follows with `error` and closes the stream.
struct HTTP2MalformedRequest {
    let error: GatewayError
}
