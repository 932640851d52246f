import NIOCore
import NIOHTTP2

/// The streams of one HTTP/2 connection, served at the connection: behind swift-nio-http2's
/// frame handler and the connection's guard, before its connection-management handler (no
/// stream multiplexer, no channel per stream). A client's HEADERS on a new stream make an ``HTTP2Stream`` with its
/// ``RequestDriver``; the stream's frames go to it by id, and its answer's frames are written
/// here. A channel per stream cost a pipeline, an HTTP/1 codec and their allocations per request
/// (`make tls-compare`: the same minimal proxy costs about a third less per HTTP/2 request with
/// its streams at the connection).
///
/// What the streams share, on the connection's event loop: the random source of their request
/// and trace ids (seeded once per connection: a system call per request for its ids is what the
/// per-connection sequences exist to avoid), the budget of answers the connection holds for its
/// client (``HTTP2AnswerBudget``), the one timer of the streams' clocks (``HTTP2StreamClock``),
/// its client's count of open streams (`max-streams-per-client`), and the connection's window,
/// given back as the frames arrive (each stream's own window bounds what it holds).
final class HTTP2Streams: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    var seeds = TraceIDSequence()
    let budget: HTTP2AnswerBudget
    let clock: HTTP2StreamClock
    let caps: ConnectionCaps
    let client: ClientKey?
    let metrics: ConnectionMetrics
    private let core: GatewayCore
    private let tls: TLSSession?
    let eventLoop: any EventLoop
    /// Who counts the streams (set once the connection's handlers are made).
    var events: HTTP2StreamEvents?
    private var context: ChannelHandlerContext?
    private var open: [HTTP2StreamID: HTTP2Stream] = [:]
    /// The streams that received frames in the current batch of reads.
    private var readers: [HTTP2Stream] = []
    /// The highest stream id a request was taken on: HEADERS on a lower id belong to a stream
    /// already ended here (trailers behind a reset swift-nio-http2 has not sent yet).
    private var lastOpened = HTTP2StreamID(0)
    /// Connection window given back and not yet sent (a socket the client does not read holds
    /// the WINDOW_UPDATE back, and swift-nio-http2's window does not count it until it is sent).
    private var windowInFlight = 0
    /// The connection's inbound window as swift-nio-http2 last told it.
    private var inboundWindow = HTTP2Stream.window

    init(core: GatewayCore, channel: any Channel, tls: TLSSession?) {
        let configuration = core.configuration
        self.core = core
        self.tls = tls
        eventLoop = channel.eventLoop
        budget = HTTP2AnswerBudget(
            limit: configuration.http2AnswerBudget, stall: TimeAmount(seconds: configuration.totalTimeout), eventLoop: channel.eventLoop)
        clock = HTTP2StreamClock(eventLoop: channel.eventLoop)
        caps = core.connections
        client = ConnectionCaps.key(of: channel.remoteAddress)
        metrics = core.metrics.connections
    }

    // MARK: - what the streams use

    var isWritable: Bool { context?.channel.isWritable ?? false }
    var remoteAddress: SocketAddress? { context?.channel.remoteAddress }
    var allocator: ByteBufferAllocator { context?.channel.allocator ?? ByteBufferAllocator() }

    func write(_ frame: HTTP2Frame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    func flush() {
        context?.flush()
    }

    /// `stream` is over: it is told, and forgotten.
    func streamEnded(_ stream: HTTP2Stream) {
        guard open[stream.id] === stream else { return }
        open[stream.id] = nil
        end(stream)
    }

    private func end(_ stream: HTTP2Stream) {
        stream.ended()
        events?.ended(stream.id)
    }

    /// A frame written to the stream `id` was refused by swift-nio-http2: the stream ends (it
    /// had, or will be reset).
    func writeFailed(on id: HTTP2StreamID) {
        open[id]?.writeFailed()
    }

    /// The client half-closed the connection: the streams whose requests are whole are answered,
    /// the others end now, and their backend connections with them.
    func clientInputClosed() {
        for stream in Array(open.values) { stream.clientInputClosed() }
    }

    // MARK: - the connection's events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        endAll()
        events = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers, .data:
            let stream: HTTP2Stream
            if let known = open[frame.streamID] {
                stream = known
            } else {
                // swift-nio-http2 has opened the stream (HEADERS on a new client stream); DATA
                // for a stream not open here belongs to one already ended: dropped.
                guard case .headers = frame.payload, frame.streamID > lastOpened else { return }
                lastOpened = frame.streamID
                stream = HTTP2Stream(id: frame.streamID, connection: self, core: core, eventLoop: context.eventLoop, tls: tls)
                open[frame.streamID] = stream
                events?.opened(frame.streamID)
            }
            if !stream.readInBatch { readers.append(stream) }
            stream.received(frame.payload)
        default:
            // RST_STREAM ends its stream through swift-nio-http2's StreamClosedEvent; the
            // management handler reads the connection's frames (PING acknowledgements).
            context.fireChannelRead(data)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        let batch = readers
        readers.removeAll(keepingCapacity: true)
        for stream in batch where !stream.isClosed { stream.readComplete() }
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let closed as StreamClosedEvent:
            if let stream = open.removeValue(forKey: closed.streamID) { end(stream) }
            // Counted from here (``HTTP2StreamEvents``), not by the management handler.
            return
        case is NIOHTTP2StreamCreatedEvent:
            return
        case let window as NIOHTTP2WindowUpdatedEvent where window.streamID == .rootStream:
            if let inbound = window.inboundWindowSize { inboundWindow = inbound }
            giveBackConnectionWindow()
        case is ChannelShouldQuiesceEvent:
            // The guard and the management handler send the GOAWAYs; each stream ends once
            // answered (one whose answer is written and only its body still arrives, now).
            for stream in Array(open.values) { stream.quiesce() }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The connection's window, kept open: refilled once half of it is used.
    private func giveBackConnectionWindow() {
        guard inboundWindow + windowInFlight <= HTTP2Stream.window / 2, let context else { return }
        let increment = HTTP2Stream.window - inboundWindow - windowInFlight
        windowInFlight += increment
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { result in
            // Counted by swift-nio-http2's window now (or dropped with the connection): once
            // sent, the window is looked at again, as the client may have used it up meanwhile.
            self.windowInFlight -= increment
            if case .success = result { self.giveBackConnectionWindow() }
        }
        write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment)), promise: written)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        for stream in Array(open.values) { stream.writabilityMayHaveChanged() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        endAll()
        context.fireChannelInactive()
    }

    private func endAll() {
        let streams = open.values
        open = [:]
        readers = []
        for stream in streams { end(stream) }
    }
}
