import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// An HTTP/2 connection of the floor proxy with its streams handled at the connection
/// (`--h2-at-connection`): swift-nio-http2's `NIOHTTP2Handler` without its multiplexer — no child
/// channel per stream, no HTTP/2-to-HTTP/1 codec — the frames of all streams read here, by stream
/// id: a request's HEADERS become an HTTP/1.1 head for a pooled upstream connection of the loop,
/// its DATA the body, and the upstream's answer goes back as the stream's HEADERS and DATA. What
/// that model would cost the gateway, measured before it is built. GETs only: a request body
/// beyond the stream's initial window would wait for a `WINDOW_UPDATE` nobody sends (the
/// multiplexer's child channels send them), which the floor's workload never needs.
final class FloorConnectionStreams: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// One stream being answered.
    final class Stream: FloorAnswerSink {
        let id: HTTP2StreamID
        unowned let connection: FloorConnectionStreams
        var upstream: FloorUpstreamHandler?
        var held: [HTTPClientRequestPart] = []

        init(id: HTTP2StreamID, connection: FloorConnectionStreams) {
            self.id = id
            self.connection = connection
        }

        func head(_ head: HTTPResponseHead) {
            var fields = HPACKHeaders()
            fields.reserveCapacity(head.headers.count + 1)
            fields.add(name: ":status", value: String(head.status.code))
            for (name, value) in head.headers where !FloorConnectionStreams.hopByHop(name) {
                fields.add(name: name.lowercased(), value: value)
            }
            connection.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: fields))))
        }

        func body(_ part: ByteBuffer) {
            connection.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(part)))))
        }

        func end() {
            connection.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))))
            connection.flush()
            connection.streams[id] = nil
        }

        func failed() {
            connection.write(HTTP2Frame(streamID: id, payload: .rstStream(.internalError)))
            connection.flush()
            connection.streams[id] = nil
        }
    }

    private let pool: FloorUpstreamPool
    fileprivate var streams: [HTTP2StreamID: Stream] = [:]
    private var context: ChannelHandlerContext?

    init(pool: FloorUpstreamPool) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for stream in streams.values { stream.upstream?.close() }
        streams = [:]
        self.context = nil
    }

    fileprivate func write(_ frame: HTTP2Frame) {
        context?.write(wrapOutboundOut(frame), promise: nil)
    }

    fileprivate func flush() {
        context?.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard streams[frame.streamID] == nil else { return }
            let stream = Stream(id: frame.streamID, connection: self)
            streams[frame.streamID] = stream
            send(.head(Self.requestHead(headers.headers)), on: stream)
            if headers.endStream { send(.end(nil), on: stream) }
        case .data(let data):
            guard let stream = streams[frame.streamID] else { return }
            if case .byteBuffer(let body) = data.data, body.readableBytes > 0 { send(.body(.byteBuffer(body)), on: stream) }
            if data.endStream { send(.end(nil), on: stream) }
        case .rstStream:
            streams.removeValue(forKey: frame.streamID)?.upstream?.close()
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        for stream in streams.values { stream.upstream?.flush() }
        context.fireChannelReadComplete()
    }

    private func send(_ part: HTTPClientRequestPart, on stream: Stream) {
        if let upstream = stream.upstream {
            upstream.write(part)
            return
        }
        stream.held.append(part)
        guard stream.held.count == 1 else { return }
        pool.take { [weak stream] connection in
            guard let stream else {
                if let connection { connection.close() }
                return
            }
            guard let connection else { return stream.failed() }
            stream.upstream = connection
            connection.client = stream
            for part in stream.held { connection.write(part) }
            stream.held = []
            connection.flush()
        }
    }

    /// The request's HPACK fields as an HTTP/1.1 head: the pseudo-fields as the request line and
    /// `Host`, the others as they are.
    static func requestHead(_ fields: HPACKHeaders) -> HTTPRequestHead {
        var method = HTTPMethod.GET, path = "/", headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for (name, value, _) in fields {
            switch name {
            case ":method": method = HTTPMethod(rawValue: value)
            case ":path": path = value
            case ":authority": headers.add(name: "Host", value: value)
            case ":scheme": continue
            default: headers.add(name: name, value: value)
            }
        }
        return HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
    }

    /// A field HTTP/1.1 connection management uses, which HTTP/2 forbids.
    static func hopByHop(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "connection" || lowered == "keep-alive" || lowered == "transfer-encoding" || lowered == "upgrade"
            || lowered == "proxy-connection"
    }
}
