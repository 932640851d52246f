import NIOCore
import NIOHTTP2
import NIOSSL

// An HTTP/2 connection as the gateway sets it up (``ClientProtocol``): its limits, what its
// streams share, the guard that closes it, and why it was closed.

/// The limits of an HTTP/2 connection, each one a bound on what a client can make the gateway
/// hold or do (docs/security.md states the cost of each attack under them).
enum HTTP2Limits {
    /// Streams open at once per connection. One more is an error swift-nio-http2 raises for the
    /// connection (`PROTOCOL_ERROR`): the streams already taken are answered before it closes
    /// (``HTTP2ConnectionError/drains``).
    static let maxConcurrentStreams = 100
    /// The largest header list (RFC 9113's count: names, values and 32 bytes per field) a client
    /// may send, and the largest header block swift-nio-http2 buffers. Above HTTP/1.1's limit for
    /// the same request (``HTTPRequestHead/maximumFieldBytes`` of names and values, answered `431`
    /// on its stream alone), so that what HTTP/1.1 refuses with an answer HTTP/2 refuses with one
    /// too, up to some 5,000 fields. Beyond this, swift-nio-http2 ends the connection: the HPACK
    /// state can no longer be trusted. Until the client acknowledges the gateway's SETTINGS,
    /// swift-nio-http2 holds header lists to its default, 16 KiB.
    static let maxHeaderListSize = 256 * 1024
    /// Empty DATA frames in a row before the connection is closed (`glitches`): some clients end a
    /// body with one, after headers that did not end the stream; a flood of them is the attack.
    static let maxEmptyDataFrames = 16
    /// CONTINUATION frames in a row: a header block split finely is valid HTTP/2 (nginx and
    /// HAProxy take them); the block's size stays bounded by ``maxHeaderListSize``.
    static let maxContinuationFrames = 64

    static var connection: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            HTTP2Setting(parameter: .headerTableSize, value: 4096),
        ]
        configuration.maximumSequentialEmptyDataFrames = maxEmptyDataFrames
        configuration.maximumSequentialContinuationFrames = maxContinuationFrames
        // swift-nio-http2's other defences, at its defaults: control frames buffered for a client
        // that does not read (10,000), reset streams remembered (32), PING/SETTINGS/PRIORITY at
        // most 200 per 30 s, 200 "glitches" (suspicious frames) per connection.
        return configuration
    }

    static var stream: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        // Rapid reset (CVE-2023-44487): at most 200 streams reset by the client per 30 s per
        // connection, and as many stream errors; the request a reset stream started is dropped
        // with it (its trip and exchange cancelled), as a closed HTTP/1.1 connection's is.
        configuration.streamResetFrameRateLimit.maximumCount = 200
        configuration.streamResetFrameRateLimit.windowLength = .seconds(30)
        return configuration
    }

    /// The graceful shutdown's GOAWAYs (swift-nio-http2's), open streams given at most
    /// `total-timeout` plus a second once the client acknowledged; the idle clock and the hard
    /// bound on the drain are ``HTTP2ConnectionGuard``'s.
    static func management(_ configuration: GatewayConfiguration) -> NIOHTTP2ServerConnectionManagementHandler.Configuration {
        NIOHTTP2ServerConnectionManagementHandler.Configuration(
            maxIdleTime: nil, maxAge: nil, maxGraceTime: TimeAmount(seconds: configuration.totalTimeout + 1), keepalive: nil)
    }
}

/// Why an HTTP/2 connection was closed (`samlgate_http2_connection_errors_total{reason}`).
enum HTTP2ConnectionError: String, CaseIterable, Sendable {
    /// More streams reset by the client than the limit allows (rapid reset).
    case rapidReset = "rapid_reset"
    /// A header block split into more CONTINUATION frames than allowed, or larger than the limit.
    case headerFlood = "header_flood"
    /// PING, SETTINGS or PRIORITY frames beyond their rate, or control frames a client never reads.
    case controlFlood = "control_flood"
    /// Empty DATA frames, or other suspicious frames beyond the limit.
    case glitches
    /// More streams opened than `SETTINGS_MAX_CONCURRENT_STREAMS`.
    case streamLimit = "stream_limit"
    /// Not an HTTP/2 preface, or a frame that breaks the protocol.
    case protocolError = "protocol_error"
    /// Answers held for a client that does not read them: the connection's answer budget spent
    /// for `total-timeout` (``HTTP2AnswerBudget``).
    case unreadAnswers = "unread_answers"

    /// Whether the error is about one request rather than the connection as a whole (a stream
    /// beyond `SETTINGS_MAX_CONCURRENT_STREAMS`): swift-nio-http2 can only end the connection for
    /// it, but the streams already taken are answered before it closes. Not a header block beyond
    /// the list size: swift-nio-http2's HPACK state is no longer to be trusted after one.
    var drains: Bool {
        self == .streamLimit
    }

    init(_ error: any Error) {
        switch error {
        case is NIOHTTP2Errors.ExcessiveRSTFrames, is NIOHTTP2Errors.ExcessiveStreamErrors: self = .rapidReset
        case is NIOHTTP2Errors.ExcessiveContinuationFrames, is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock: self = .headerFlood
        case is NIOHTTP2Errors.ExcessiveControlFrames, is NIOHTTP2Errors.ExcessiveOutboundFrameBuffering: self = .controlFlood
        case is NIOHTTP2Errors.ExcessiveEmptyDataFrames, is NIOHTTP2Errors.ExcessiveNumberOfGlitches: self = .glitches
        case is NIOHTTP2Errors.MaxStreamsViolation: self = .streamLimit
        default: self = .protocolError
        }
    }
}

/// Why swift-nio-http2 reset one stream and left its connection alone
/// (`samlgate_http2_stream_errors_total{reason}`). Only errors swift-nio-http2 raises for one
/// stream alone are here; one it may raise for either (a bad state transition, flow control)
/// closes the connection.
enum HTTP2StreamError: String, CaseIterable, Sendable {
    /// A request's header block or length that HTTP/2 forbids: a connection-specific or
    /// upper-case field, pseudo-headers missing, repeated or out of place, `content-length`
    /// against the DATA sent, trailers without the end of the stream (`PROTOCOL_ERROR`).
    case malformed
    /// A stream opened after the gateway's GOAWAY: refused (`REFUSED_STREAM`), for the client to
    /// retry on a new connection.
    case refused
    /// A stream beyond its client's `max-streams-per-client`: refused (`REFUSED_STREAM`).
    case clientLimit = "client_limit"

    init?(_ error: any Error) {
        switch error {
        case let wrapped as NIOHTTP2Errors.StreamError where wrapped.baseError is NIOHTTP2Errors.CreatedStreamAfterGoaway: self = .refused
        case is NIOHTTP2Errors.CreatedStreamAfterGoaway: self = .refused
        case is NIOHTTP2Errors.ForbiddenHeaderField, is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName,
            is NIOHTTP2Errors.DuplicatePseudoHeader, is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader,
            is NIOHTTP2Errors.UnknownPseudoHeader, is NIOHTTP2Errors.UnsupportedPseudoHeader,
            is NIOHTTP2Errors.InvalidPseudoHeaders, is NIOHTTP2Errors.EmptyPathHeader,
            is NIOHTTP2Errors.InvalidPseudoHeaderValue, is NIOHTTP2Errors.TrailersWithoutEndStream,
            is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue:
            self = .malformed
        default: return nil
        }
    }
}

/// Between swift-nio-http2's handler and its connection-management handler, what neither does:
///
/// - **Close on errors.** swift-nio-http2 answers a protocol error or a flood with a GOAWAY but
///   leaves the connection open; this closes it, counted by reason. Not from inside the error
///   (it is raised mid frame-processing, and a connection closed there keeps the streams opened
///   in the same read for ever): on the next loop tick. A stream's own error is not the
///   connection's (``HTTP2StreamError``): swift-nio-http2 has reset that stream already, and
///   the streams beside it go on — a malformed request among answers in flight, or a stream
///   opened after a graceful shutdown's GOAWAY, must not cost the others their answers. Too
///   many of them is a flood swift-nio-http2 ends as a connection error (`rapid_reset`). A
///   stream beyond the concurrency limit is one request's error too, which swift-nio-http2 can
///   only raise for the connection: the connection drains (``HTTP2ConnectionError/drains``) —
///   the streams already taken are answered, as in a graceful shutdown, then it closes.
/// - **The idle clock.** A connection with no stream open for `idle-timeout` is told so with a
///   GOAWAY (`NO_ERROR`, the last stream it took) and closed: the client knows what was answered
///   and that a new connection is safe (the management handler's own idle timer starts on
///   `channelActive`, which a connection set up after its TLS handshake or its h2c preface never
///   sees again; and its close waits for the client to acknowledge a PING).
/// - **Bound a graceful shutdown.** The management handler's grace period starts only when the
///   client acknowledges its PING; a client that never does would hold the drain for ever. After
///   `grace` (`total-timeout` + 1 s) the connection is closed, streams or not.
/// - **Close a half-closed connection** once the streams whose requests are whole are answered
///   (within the drain's bound): it can open no more, and the streams still waiting for a body
///   end at once (``HTTP2Streams/clientInputClosed()``).
/// - **Close a connection that holds its answer budget** for `total-timeout`
///   (``HTTP2AnswerBudget``), with a GOAWAY (`ENHANCE_YOUR_CALM`).
final class HTTP2ConnectionGuard: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let metrics: ConnectionMetrics
    private let streams: HTTP2Streams
    private let idle: TimeAmount
    private let grace: TimeAmount
    /// What it decides (``HTTP2ConnectionState``); the guard carries it out.
    private var state = HTTP2ConnectionState()
    private var idleTimer: Scheduled<Void>?
    private var drainDeadline: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(metrics: ConnectionMetrics, streams: HTTP2Streams, idle: TimeAmount, grace: TimeAmount) {
        self.metrics = metrics
        self.streams = streams
        self.idle = idle
        self.grace = grace
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        run(state.added())
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        streams.budget.onStall = { loopBound.value.budgetStalled() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        drainDeadline?.cancel()
        streams.budget.close()
        streams.clock.stop()
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.StreamClosed || state.closing { return }
        // A TLS client's FIN without close_notify: a half-close like any other (`inputClosed`
        // follows), not a reason to drop the streams still being answered.
        if let tlsError = error as? NIOSSLError, case .uncleanShutdown = tlsError { return }
        if let streamError = HTTP2StreamError(error) {
            metrics.http2StreamReset(streamError)
            return
        }
        // A frame the gateway wrote to one stream that swift-nio-http2 refused (the stream ended
        // meanwhile): that stream's matter alone, never the client's fault.
        if let wrapped = error as? NIOHTTP2Errors.StreamError {
            streams.writeFailed(on: wrapped.streamID)
            return
        }
        // Not HTTP/2's: a connection that broke (a reset, TLS cut short), not counted.
        guard error is any NIOHTTP2Error else { return run(state.failed(.broken)) }
        let reason = HTTP2ConnectionError(error)
        metrics.http2ConnectionClosed(reason)
        run(state.failed(.connection(reason)))
    }

    /// A stream opened (``HTTP2StreamEvents``): the connection is not idle.
    func streamCreated(_ id: HTTP2StreamID) {
        run(state.streamCreated(id))
    }

    /// A stream closed: the last one starts the idle clock, or closes a connection the client
    /// has half-closed.
    func streamClosed() {
        run(state.streamClosed())
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as ChannelEvent where event == .inputClosed:
            state.clientInputClosed()
            streams.clientInputClosed()
            run(state.unfinishedStreamsEnded())
            return
        case is ChannelShouldQuiesceEvent:
            run(state.quiesce())
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The answer budget stayed spent for its bound: the client does not read.
    private func budgetStalled() {
        let action = state.budgetStalled()
        if action != .none { metrics.http2ConnectionClosed(.unreadAnswers) }
        run(action)
    }

    /// Carries out what the state decided.
    private func run(_ action: HTTP2ConnectionState.Action) {
        guard let context else { return }
        switch action {
        case .none:
            return
        case .armIdle:
            armIdle(context)
        case .cancelIdle:
            idleTimer?.cancel()
            idleTimer = nil
        case .closeNextTick:
            // Not from inside swift-nio-http2's frame processing, where errors and stream events
            // are raised: a connection closed there keeps the streams opened in the same read.
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.assumeIsolated().execute { loopBound.value.close(promise: nil) }
        case .close:
            context.close(promise: nil)
        case .boundDrain(let quiesce):
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            drainDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: grace) { loopBound.value.close(promise: nil) }
            // swift-nio-http2 has sent its GOAWAY; the management handler's graceful shutdown
            // answers the streams taken and closes, within the drain's bound.
            if quiesce { context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        case .quiesce:
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        case .goAwayAndClose(let code, let lastStream):
            // The flush coalescer writes the GOAWAY out before the close.
            let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStream, errorCode: code, opaqueData: nil))
            context.writeAndFlush(NIOAny(goAway), promise: nil)
            context.close(promise: nil)
        }
    }

    private func armIdle(_ context: ChannelHandlerContext) {
        idleTimer?.cancel()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: idle) {
            let guardHandler = loopBound.value
            guardHandler.run(guardHandler.state.idleExpired())
        }
    }
}

/// The streams the connection serves, as ``HTTP2Streams`` opens and ends them: the management
/// handler counts them (its graceful shutdown waits for them) and the guard (its idle clock).
/// Told of the streams that carry a request, each opened and ended once (swift-nio-http2's own
/// stream events also name streams that never reach a request, and may order them otherwise).
struct HTTP2StreamEvents {
    let management: NIOHTTP2ServerConnectionManagementHandler.HTTP2StreamDelegate
    let guardHandler: HTTP2ConnectionGuard
    let channel: any Channel

    func opened(_ id: HTTP2StreamID) {
        management.streamCreated(id, channel: channel)
        guardHandler.streamCreated(id)
    }

    func ended(_ id: HTTP2StreamID) {
        management.streamClosed(id, channel: channel)
        guardHandler.streamClosed()
    }
}

/// Between TLS (or the socket) and swift-nio-http2's handler: the flushes asked for in one turn
/// of the event loop become one. Each stream flushes its answer as the upstream's read ends it,
/// and the answers to several streams of a connection often end in the same turn (the upstream
/// connections' reads come in one batch); flushed one by one, each was a pass through TLS and a
/// `writev` of its own. The flush is taken once the turn's I/O is done (a task on the loop),
/// and at once before a close, so that nothing written is left behind (swift-nio-ssl drops
/// writes not flushed when it closes).
final class HTTP2FlushCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var pending = false
    private var removed = false

    func flush(context: ChannelHandlerContext) {
        guard !pending else { return }
        pending = true
        context.eventLoop.assumeIsolated().execute { self.flushNow(context) }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context)
        context.close(mode: mode, promise: promise)
    }

    /// Removed only as the channel is torn down; what is pending goes out first all the same.
    func handlerRemoved(context: ChannelHandlerContext) {
        flushNow(context)
        removed = true
    }

    private func flushNow(_ context: ChannelHandlerContext) {
        guard pending, !removed else { return }
        pending = false
        context.flush()
    }
}
