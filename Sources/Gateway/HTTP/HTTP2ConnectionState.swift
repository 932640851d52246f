import NIOHTTP2

/// What an HTTP/2 connection's guard (``HTTP2ConnectionGuard``) decides, as a value: how many
/// streams are open and the last one taken, whether the client half-closed, whether the
/// connection is closing and whether its drain is bounded. Each event returns the one thing to
/// do; nothing here touches a channel or a timer, so every rule is tested alone
/// (`HTTP2ConnectionStateTests`).
struct HTTP2ConnectionState {
    /// What the guard does after an event.
    enum Action: Equatable {
        case none
        /// Start the idle clock: no stream is open.
        case armIdle
        /// A stream opened: the connection is not idle.
        case cancelIdle
        /// Close on the next turn of the loop (not from inside swift-nio-http2's frame processing).
        case closeNextTick
        /// Close now.
        case close
        /// Close `grace` from now, streams or not; `quiesce`: and start the graceful shutdown
        /// (the management handler answers the streams taken, then closes).
        case boundDrain(quiesce: Bool)
        /// Start the graceful shutdown; its bound is set already.
        case quiesce
        /// Tell the client the last stream taken and why, then close.
        case goAwayAndClose(HTTP2ErrorCode, lastStream: HTTP2StreamID)
    }

    /// An error raised on the connection, as the guard classified it.
    enum Failure: Equatable {
        /// Not HTTP/2's: the connection broke (a reset, TLS cut short). Not counted.
        case broken
        /// An HTTP/2 connection error (counted by reason by the guard).
        case connection(HTTP2ConnectionError)
    }

    private(set) var openStreams = 0
    /// The highest stream the client opened: what a GOAWAY of the gateway's says it took.
    private(set) var lastStream = HTTP2StreamID(0)
    /// The client half-closed the connection: the last stream's end closes it.
    private(set) var inputClosed = false
    /// The connection is being closed: nothing more is decided.
    private(set) var closing = false
    /// The drain's hard bound is set (``Action/boundDrain(quiesce:)``, once).
    private(set) var drainBounded = false

    /// The guard is in the pipeline.
    func added() -> Action {
        openStreams == 0 ? .armIdle : .none
    }

    mutating func streamCreated(_ id: HTTP2StreamID) -> Action {
        openStreams += 1
        if id > lastStream { lastStream = id }
        return .cancelIdle
    }

    /// The last stream to close starts the idle clock, or closes a connection the client half-closed.
    mutating func streamClosed() -> Action {
        assert(openStreams > 0, "a stream closed that was never opened")
        openStreams = max(0, openStreams - 1)
        guard openStreams == 0 else { return .none }
        return inputClosed ? .closeNextTick : .armIdle
    }

    /// The client sends nothing more: noted before the streams whose requests are not whole are
    /// ended (each end may be the last, ``streamClosed()``).
    mutating func clientInputClosed() {
        inputClosed = true
    }

    /// Those streams ended: the ones left are answered first (within the drain's bound), then
    /// the connection is closed; with none left, now.
    mutating func unfinishedStreamsEnded() -> Action {
        openStreams == 0 ? .close : bound(quiesce: false)
    }

    /// A graceful shutdown began (the management handler drains): its bound is set.
    mutating func quiesce() -> Action {
        bound(quiesce: false)
    }

    /// An error swift-nio-http2 or the transport raised for the connection. One that only ends
    /// a stream beyond the concurrency limit drains (the streams taken are answered); any other
    /// closes on the next tick. Nothing once closing.
    mutating func failed(_ failure: Failure) -> Action {
        guard !closing else { return .none }
        if case .connection(let reason) = failure, reason.drains { return bound(quiesce: true) }
        closing = true
        return .closeNextTick
    }

    /// The idle clock ran out: a GOAWAY (`NO_ERROR`) and the close.
    mutating func idleExpired() -> Action {
        guard !closing else { return .none }
        closing = true
        return .goAwayAndClose(.noError, lastStream: lastStream)
    }

    /// The answer budget stayed spent for its bound: the client does not read
    /// (`ENHANCE_YOUR_CALM`). Returns `.none` once closing (counted only when acted on).
    mutating func budgetStalled() -> Action {
        guard !closing else { return .none }
        closing = true
        return .goAwayAndClose(.enhanceYourCalm, lastStream: lastStream)
    }

    private mutating func bound(quiesce: Bool) -> Action {
        guard !drainBounded else { return quiesce ? .quiesce : .none }
        drainBounded = true
        return .boundDrain(quiesce: quiesce)
    }
}
