import NIOCore
import NIOHTTP1

/// The framing and order of one client connection, as a value: which state the connection is in
/// (``State``: idle, a request in flight in one of its ``RequestPhase``s, closing), what waits
/// behind the request in flight, whether reads are held, the client's clocks, and what the
/// request's head says of its answer (a `100 Continue` owed, HTTP/1.0). Every event the
/// ``RequestDriver`` receives goes in here and comes back as one ``Action``, which the driver
/// carries out in one switch (the shape of AsyncHTTPClient's `HTTP1ConnectionStateMachine`);
/// an event the state does not allow comes back as ``Action/fault(_:)``. Nothing here touches
/// a channel, so each transition is tested alone (`ConnectionStateMachineTests`).
///
/// One request at a time: the parts of a pipelined request that arrive while the one before is
/// still being answered wait in order (reads stop meanwhile) and are taken up once that answer is
/// written. NIO's `HTTPServerPipelineHandler` would do the same, but it withholds the connection's
/// reads during every answer, which costs two `epoll_ctl` calls per request whether the client
/// pipelines or not; here reads stop only when something waits. And no request is begun while the
/// client has not taken the answers before it (the channel is not writable): a client that
/// pipelines `GET /metrics` without ever reading would otherwise have the gateway pile up its
/// answers in memory, a few bytes of request for kilobytes of answer. An HTTP/2 stream is one
/// request on a machine of its own: no request waits behind another there, and its head
/// arrives whole (the header clock never runs).
struct ConnectionStateMachine {
    /// Where the connection is.
    enum State: Equatable {
        /// No request: the next head is awaited.
        case idle
        /// A request is in flight; `closeAfterAnswer`: the connection ends with its answer (no
        /// keep-alive, an unread body left behind, an upgrade, a quiesce).
        case inRequest(RequestPhase, closeAfterAnswer: Bool)
        /// The connection ends: its last answer is being written (and ``closeBy`` bounds how long
        /// that may take), or it is being closed. Nothing more is taken up.
        case closing
    }

    /// Where the request in flight is, from the body it is still receiving and the answer it is writing.
    enum RequestPhase: Equatable {
        /// The request's body is arriving; no answer has begun.
        case receiving
        /// The body arrived whole; the answer is being prepared (a worker, the backend).
        case awaitingAnswer
        /// The answer began while the body still arrives (a backend that answers early, a refusal).
        case answeringWhileReceiving
        /// The body arrived whole and the answer is being written.
        case answering
        /// The answer is written; the rest of the body arrives and is dropped.
        case drainingBody
    }

    /// What the driver does after an event: the one outcome of each transition.
    enum Action: Equatable {
        /// Nothing (a part held behind the request in flight or dropped after a closing answer,
        /// a half-close waiting for the answer).
        case none
        /// Take this part up now: a head begins a request, a body part or end goes where the
        /// request's body goes.
        case deliver(HTTPServerRequestPart)
        /// Issue the read that was held.
        case read
        /// Take up what waited behind the request just finished.
        case takeUpQueued
        /// Send `100 Continue`: the request's body is wanted.
        case writeContinue
        /// The request is done: its answer was written before its body ended.
        case complete
        /// Write the answer's end; `complete`: the request is done (its body was read whole) and
        /// what waited is taken up; `read`: ask for the next read.
        case endAnswer(complete: Bool, read: Bool)
        /// Write the answer's end, and close once it is written.
        case endAnswerAndClose
        /// Close the connection now.
        case close
        /// The timer must fire by this deadline.
        case wake(at: NIODeadline)
        /// A client clock ran out.
        case timedOut(ClientDeadlines.Expiry)
        /// The parser refused what it read, now in its turn.
        case unparsable(HTTPParserError)
        /// An event the state does not allow (a bug of the gateway's, ``StateFault``): the
        /// connection is closing from it on; the driver counts it and closes.
        case fault(StateFault)
    }

    /// What arrived for later: parts of pipelined requests, and what followed them.
    private enum Queued {
        case part(HTTPServerRequestPart)
        case parserError(HTTPParserError)
        case inputClosed
    }

    private(set) var state: State = .idle
    /// The client half-closed: no request follows the one in flight.
    private(set) var inputClosed = false
    private var queued = CircularBuffer<Queued>(initialCapacity: 0)
    /// Within a take-up loop (``beginTakeUp(at:)``): a request answered synchronously by a part
    /// taken up does not start a nested loop (pipelined requests answered at once would
    /// otherwise recurse once per request).
    private var takingUp = false
    private(set) var reads = ReadGate()
    private(set) var deadlines: ClientDeadlines
    /// A batch of reads is open: `channelReadComplete` follows (and flushes a trip's writes).
    private(set) var readBatchOpen = false
    /// A part arrived in the current batch of reads (a batch without one carried part of a head).
    private var deliveredInBatch = false
    /// The request in flight waits for `100 Continue` before it sends its body, not yet sent.
    private(set) var expectsContinue = false
    /// The request in flight is HTTP/1.0's: it cannot take a chunked answer.
    private var predatesHTTP11 = false
    /// When a connection closing after its last answer is closed whether or not the client took
    /// that answer: a client that never reads would otherwise keep it open (`idle-timeout` after
    /// the answer's end, ``closingAfterLastAnswer(at:)``).
    private(set) var closeBy: NIODeadline?
    /// Whether a fault stops a debug build (the tests of the release path say `false`).
    private let trapsOnFault: Bool

    init(deadlines: ClientDeadlines, trapsOnFault: Bool = true) {
        self.deadlines = deadlines
        self.trapsOnFault = trapsOnFault
    }

    /// An event the state does not allow: nothing more is taken up or written on the connection.
    private mutating func illegal(_ event: String) -> Action {
        let fault = StateFault.illegal(.connection, "\(event) (\(state))", traps: trapsOnFault)
        state = .closing
        return .fault(fault)
    }

    // MARK: - the request in flight

    /// A request is in flight (the driver's `InFlightRequest` is set).
    var hasRequest: Bool {
        if case .inRequest = state { true } else { false }
    }

    /// The request's body has arrived whole (or there is no request).
    var bodyEnded: Bool {
        switch state {
        case .inRequest(.receiving, _), .inRequest(.answeringWhileReceiving, _), .inRequest(.drainingBody, _): false
        case .inRequest(.awaitingAnswer, _), .inRequest(.answering, _), .idle, .closing: true
        }
    }

    /// The request's answer has begun (a head written).
    var answerStarted: Bool {
        switch state {
        case .inRequest(.answeringWhileReceiving, _), .inRequest(.answering, _), .inRequest(.drainingBody, _): true
        case .inRequest(.receiving, _), .inRequest(.awaitingAnswer, _), .idle, .closing: false
        }
    }

    var isClosing: Bool { state == .closing }

    /// Whether the connection ends with the answer in flight.
    var closesAfterAnswer: Bool {
        switch state {
        case .inRequest(_, let close): close
        case .idle: false
        case .closing: true
        }
    }

    /// A new request's head; `keepAlive`: its version and `Connection` allow another after it;
    /// `expectsContinue`: it waits for `100 Continue` before it sends its body; `predatesHTTP11`:
    /// an HTTP/1.0 request.
    mutating func headReceived(keepAlive: Bool, expectsContinue: Bool = false, predatesHTTP11: Bool = false) {
        assert(state == .idle, "a head while a request is in flight or the connection closes")
        deadlines.headComplete()
        state = .inRequest(.receiving, closeAfterAnswer: !keepAlive)
        self.expectsContinue = expectsContinue
        self.predatesHTTP11 = predatesHTTP11
    }

    /// The request's body is wanted: `100 Continue` once, to a request that asked for it.
    mutating func bodyWanted() -> Action {
        defer { expectsContinue = false }
        return expectsContinue ? .writeContinue : .none
    }

    /// The request is refused. The connection closes after the refusal when `closing` (a body
    /// the gateway will not read follows), and when the client still waits for `100 Continue`
    /// with its body unsent: it may send the body after the refusal as well as not, and nothing
    /// could tell that body from the next request.
    mutating func refusing(closing: Bool) -> Action {
        guard closing || expectsContinue && !bodyEnded else { return .none }
        return closeAfterAnswer()
    }

    /// The request's body broke off (an error, a close) while it was still arriving and before
    /// any answer: the client's fault, counted like a broken body.
    var brokeOffMidBody: Bool { !answerStarted && !bodyEnded }

    /// The connection ends with the answer in flight.
    mutating func closeAfterAnswer() -> Action {
        switch state {
        case .inRequest(let phase, _):
            if phase == .drainingBody { return illegal("no answer in flight to close after") }
            state = .inRequest(phase, closeAfterAnswer: true)
        case .closing: break  // it ends anyway
        case .idle: return illegal("no answer in flight to close after")
        }
        return .none
    }

    /// The request's body arrived whole: ``Action/complete`` when its answer was already written.
    mutating func endOfBody() -> Action {
        switch state {
        case .inRequest(.receiving, let close): state = .inRequest(.awaitingAnswer, closeAfterAnswer: close)
        case .inRequest(.answeringWhileReceiving, let close): state = .inRequest(.answering, closeAfterAnswer: close)
        case .inRequest(.drainingBody, _):
            state = .idle
            return .complete
        case .closing: break
        case .idle, .inRequest(.awaitingAnswer, _), .inRequest(.answering, _): return illegal("the end of a body that had ended")
        }
        return .none
    }

    /// The answer's head is being written; ``closesAfterAnswer`` then says whether its head says
    /// `Connection: close`. `lengthKnown`: the answer's length is in its head; one of unknown
    /// length to an HTTP/1.0 client ends with the connection (it cannot take a chunked body).
    mutating func startAnswer(lengthKnown: @autoclosure () -> Bool = true) -> Action {
        // Read only for an HTTP/1.0 client: the answer's fields are not scanned for the others.
        if predatesHTTP11 && !lengthKnown(), case .inRequest(let phase, _) = state { state = .inRequest(phase, closeAfterAnswer: true) }
        switch state {
        case .inRequest(.receiving, let close): state = .inRequest(.answeringWhileReceiving, closeAfterAnswer: close)
        case .inRequest(.awaitingAnswer, let close): state = .inRequest(.answering, closeAfterAnswer: close)
        case .closing: break  // ends anyway: nothing is written after the close
        case .idle, .inRequest(.answeringWhileReceiving, _), .inRequest(.answering, _), .inRequest(.drainingBody, _):
            return illegal("an answer begun twice or for no request")
        }
        return .none
    }

    /// The answer is written whole. The connection closes after it when it was to, or when the
    /// client half-closed; else it waits for the rest of the body or takes up the next request.
    /// - Parameter writable: the client takes its answers (else reads stay held until it does).
    mutating func answerEnded(writable: Bool) -> Action {
        if closesAfterAnswer || inputClosed {
            state = .closing
            return .endAnswerAndClose
        }
        let complete = bodyEnded
        state = complete ? .idle : .inRequest(.drainingBody, closeAfterAnswer: false)
        // Reads may have been held for the backend; the rest of the body is dropped at full
        // speed. (Held for pipelined requests instead: those are taken up first. And held while
        // the client leaves its answers unread.)
        var read = false
        if !writable {
            reads.pause()
        } else if queued.isEmpty {
            read = reads.open()
        }
        return .endAnswer(complete: complete, read: read)
    }

    // MARK: - reading

    /// A part read from the client: delivered now, or held behind the request in flight (reads
    /// stop), or dropped after a closing answer.
    mutating func read(_ part: HTTPServerRequestPart, writable: Bool) -> Action {
        readBatchOpen = true
        deliveredInBatch = true
        if state == .closing { return .none }
        if hasRequest && (bodyEnded || !queued.isEmpty) {
            // A pipelined request behind the one being answered; none follows a closing answer.
            guard !closesAfterAnswer else { return .none }
            return hold(.part(part))
        }
        if state == .idle && (!queued.isEmpty || !writable) {
            // A request behind answers the client has not taken yet: it waits (in order).
            return hold(.part(part))
        }
        return .deliver(part)
    }

    private mutating func hold(_ item: Queued) -> Action {
        queued.append(item)
        reads.pause()
        return .none
    }

    /// The end of a batch of reads: ``Action/wake(at:)`` by the header's deadline when this
    /// batch began a head without completing it (a head normally arrives whole in one read).
    mutating func readComplete(at now: NIODeadline) -> Action {
        deadlines.noteRead(at: now)
        let partial = !deliveredInBatch && state == .idle
        deliveredInBatch = false
        readBatchOpen = false
        guard partial, let deadline = deadlines.headStarted(at: now) else { return .none }
        return .wake(at: deadline)
    }

    /// The transport's read request: whether to pass the read on now; otherwise it is held.
    mutating func readRequested() -> Bool {
        reads.admits()
    }

    /// Reads stop (the backend does not take the body as fast as it comes).
    mutating func pauseReads() {
        reads.pause()
    }

    /// Reads go on: ``Action/read`` when a read was held meanwhile.
    mutating func resumeReads() -> Action {
        reads.open() ? .read : .none
    }

    /// The parser refused what it read: answered now, or in its turn behind a pipelined request;
    /// after a close it is the close's echo.
    mutating func parserFailed(_ error: HTTPParserError) -> Action {
        if state == .closing { return .none }
        if hasRequest && (bodyEnded || !queued.isEmpty) {
            queued.append(.parserError(error))
            return .none
        }
        return .unparsable(error)
    }

    /// The client half-closed. Waits behind what is queued; else: an idle connection closes now,
    /// one with a request closes once its answer is written. A connection already closing is left
    /// to finish writing its last answer: a client may half-close after its request and still read it.
    mutating func clientInputClosed() -> Action {
        if !queued.isEmpty {
            queued.append(.inputClosed)
            return .none
        }
        return inputClosedInTurn()
    }

    private mutating func inputClosedInTurn() -> Action {
        inputClosed = true
        guard state == .idle else { return .none }
        state = .closing
        return .close
    }

    /// Shutting down: idle connections close now, a request in flight is answered
    /// (`Connection: close`) and the connection closed; pipelined ones are dropped.
    mutating func quiesce() -> Action {
        queued.removeAll()
        switch state {
        case .inRequest(.drainingBody, _), .idle, .closing:
            // Idle, or answered with the rest of a body still coming: not waited for.
            state = .closing
            return .close
        case .inRequest(let phase, _):
            state = .inRequest(phase, closeAfterAnswer: true)
            return .none
        }
    }

    /// The connection ends from the driver — an error, a timeout, a head the parser refused or
    /// that did not arrive in time (a plain refusal is written first): nothing more is taken up.
    mutating func closed() {
        state = .closing
    }

    /// The last answer's end is being written at `now`, the close to follow once it is: the
    /// timer must fire by ``closeBy``, when it closes all the same.
    mutating func closingAfterLastAnswer(at now: NIODeadline) -> Action {
        assert(state == .closing, "a last answer on a connection that goes on")
        let deadline = now + deadlines.idle
        closeBy = deadline
        return .wake(at: deadline)
    }

    // MARK: - what waited

    /// Whether something waits behind the request in flight.
    var hasQueued: Bool { !queued.isEmpty }

    /// Starts taking up what waited, unless a loop doing so is already running further up the
    /// stack. Returns false then (that loop goes on).
    mutating func beginTakeUp(at now: NIODeadline) -> Bool {
        guard !takingUp else { return false }
        takingUp = true
        // Reads were held for what waited here: the client's idle clock starts again now, not at
        // the read that brought it (which may be older than idle-timeout).
        deadlines.noteRead(at: now)
        return true
    }

    /// What to do with the next thing that waited, while it can be taken up: no request in
    /// flight with its body complete (its answer pending), and no request begun while the
    /// client has not taken the answers before it. `nil`: the loop stops.
    mutating func nextQueued(writable: Bool) -> Action? {
        guard state != .closing, !(hasRequest && bodyEnded), let next = queued.first else { return nil }
        if state == .idle, case .part(.head) = next, !writable { return nil }
        queued.removeFirst()
        switch next {
        case .part(let part): return .deliver(part)
        case .parserError(let error): return .unparsable(error)
        case .inputClosed: return inputClosedInTurn()
        }
    }

    /// The loop of ``beginTakeUp(at:)`` is done: reads go on when nothing waits any more
    /// (``Action/read`` when one was held).
    mutating func endTakeUp() -> Action {
        takingUp = false
        guard queued.isEmpty, state != .closing else { return .none }
        return reads.open() ? .read : .none
    }

    /// The client took its answers (the channel is writable again) and no trip is relaying one:
    /// what waited goes on, or the read held meanwhile.
    mutating func writable() -> Action {
        guard state != .closing else { return .none }
        if !queued.isEmpty { return .takeUpQueued }
        return reads.open() ? .read : .none
    }

    // MARK: - clocks

    /// The timer fired at `now`: which client clock ran out, else when to look next. A client
    /// silent while its answer is being prepared is waiting, not idle; a closing connection has
    /// only ``closeBy``.
    mutating func expired(at now: NIODeadline) -> Action {
        if state == .closing {
            guard let closeBy, now >= closeBy else { return .wake(at: nextCheck) }
            return .timedOut(.lastAnswerUnread)
        }
        var expiry = deadlines.expired(at: now)
        if expiry == .idle && hasRequest && bodyEnded {
            deadlines.noteRead(at: now)
            expiry = nil
        }
        guard let expiry else { return .wake(at: nextCheck) }
        return .timedOut(expiry)
    }

    mutating func noteRead(at now: NIODeadline) {
        deadlines.noteRead(at: now)
    }

    /// When the timer must next look for the client's clocks: ``closeBy`` once closing (never,
    /// without one), else ``ClientDeadlines/nextCheck``.
    var nextCheck: NIODeadline {
        state == .closing ? closeBy ?? .distantFuture : deadlines.nextCheck
    }
}

/// Holds back a channel's reads while the other side of a relay cannot keep up, and gives back
/// the one read that was asked for meanwhile. Both ends of a pass-through use it: the client
/// connection while the backend is not writable, the backend connection while the client is not.
struct ReadGate {
    private(set) var isPaused = false
    private var held = false

    /// For `read(context:)`: whether to pass the read on now; otherwise it is held.
    mutating func admits() -> Bool {
        if isPaused { held = true }
        return !isPaused
    }

    mutating func pause() {
        isPaused = true
    }

    /// Opens the gate; returns whether a held read must be issued now.
    mutating func open() -> Bool {
        guard isPaused else { return false }
        isPaused = false
        defer { held = false }
        return held
    }
}

/// The two clocks of a client connection, checked by one timer per connection:
///
/// - `idle-timeout`: nothing read for this long — between requests, within a head, within a
///   body (a client waiting for its answer is not idle: ``ConnectionStateMachine/expired(at:)``);
/// - `header-timeout`: a request head not complete this long after its first bytes arrived,
///   however slowly they trickle in (each byte resets the idle clock, not this one).
///
/// A read only notes the time; the timer is re-armed when it fires early, and moved forward
/// only when a head starts (rare: a head normally arrives whole in the read that starts it).
struct ClientDeadlines {
    enum Expiry {
        case idle
        case header
        /// The last answer of a closing connection not taken by ``ConnectionStateMachine/closeBy``.
        case lastAnswerUnread
    }

    let idle: TimeAmount
    let header: TimeAmount
    private var lastRead: NIODeadline
    private var headDeadline: NIODeadline?

    init(idle: TimeAmount, header: TimeAmount, now: NIODeadline) {
        self.idle = idle
        self.header = header
        lastRead = now
    }

    mutating func noteRead(at now: NIODeadline) {
        lastRead = now
    }

    /// Bytes of a head arrived without completing it. Returns the new deadline when it is the
    /// first such read of this head (the timer must then fire no later than it).
    mutating func headStarted(at now: NIODeadline) -> NIODeadline? {
        guard headDeadline == nil else { return nil }
        headDeadline = now + header
        return headDeadline
    }

    mutating func headComplete() {
        headDeadline = nil
    }

    /// Which clock ran out by `now`, the header's first.
    func expired(at now: NIODeadline) -> Expiry? {
        if let headDeadline, now >= headDeadline { return .header }
        if now >= lastRead + idle { return .idle }
        return nil
    }

    /// When the timer must next look.
    var nextCheck: NIODeadline {
        let idleAt = lastRead + idle
        guard let headDeadline else { return idleAt }
        return min(idleAt, headDeadline)
    }
}

extension TimeAmount {
    /// A setting's seconds (`idle-timeout: 2.5`) as NIO's nanoseconds.
    init(seconds: Double) {
        self = .nanoseconds(Int64(seconds * 1e9))
    }
}
