import NIOCore
import NIOHTTP1

/// The framing and order of one client connection, as a value: which state the connection is in
/// (``State``), what waits behind the request in flight, whether reads are held, the client's
/// clocks, and what the request's head says of its answer (a `100 Continue` owed, HTTP/1.0).
/// Every event the connection handler receives is a transition here that returns what the
/// handler must do, and the handler performs it (the shape of swift-nio's
/// `HTTPServerPipelineHandler.ConnectionState`); of its own it keeps the timer it set, and an
/// HTTP/2 stream's reservation of its connection's answer budget. Nothing here touches a channel, so
/// each transition is tested alone (`ConnectionStateMachineTests`).
///
/// One request at a time: the parts of a pipelined request that arrive while the one before is
/// still being answered wait in order (reads stop meanwhile) and are taken up once that answer is
/// written. NIO's `HTTPServerPipelineHandler` would do the same, but it withholds the connection's
/// reads during every answer, which costs two `epoll_ctl` calls per request whether the client
/// pipelines or not; here reads stop only when something waits. And no request is begun while the
/// client has not taken the answers before it (the channel is not writable): a client that
/// pipelines `GET /metrics` without ever reading would otherwise have the gateway pile up its
/// answers in memory, a few bytes of request for kilobytes of answer.
struct ConnectionStateMachine {
    /// Where the connection is. A request in flight is in one of five states, from the body it is
    /// still receiving and the answer it is writing; `closeAfterAnswer` says the connection ends
    /// with that answer (no keep-alive, an unread body left behind, an upgrade, a quiesce).
    enum State: Equatable {
        /// No request: the next head is awaited.
        case idle
        /// The request's body is arriving; no answer has begun.
        case receiving(closeAfterAnswer: Bool)
        /// The body arrived whole; the answer is being prepared (a worker, the backend).
        case awaitingAnswer(closeAfterAnswer: Bool)
        /// The answer began while the body still arrives (a backend that answers early, a refusal).
        case answeringWhileReceiving(closeAfterAnswer: Bool)
        /// The body arrived whole and the answer is being written.
        case answering(closeAfterAnswer: Bool)
        /// The answer is written; the rest of the body arrives and is dropped.
        case drainingBody
        /// The connection ends: its last answer is being written (and the handler bounds how long
        /// that may take), or it is being closed. Nothing more is taken up.
        case closing
    }

    /// What arrived for later: parts of pipelined requests, and what followed them.
    enum Queued {
        case part(HTTPServerRequestPart)
        case parserError(HTTPParserError)
        case inputClosed
    }

    /// What to do with a part just read (``read(_:writable:)``).
    enum ReadAction: Equatable {
        /// Take it up now.
        case deliver
        /// It waits behind the request in flight (reads are held).
        case hold
        /// Nothing is taken up after a closing answer: what a client sent after it is never forwarded.
        case drop
    }

    /// What to do once the answer in flight is written (``answerEnded(writable:)``).
    enum AnswerEndAction: Equatable {
        /// Write the end, then close once it is written.
        case endAndClose
        /// Write the end and keep the connection; `complete`: the request is done (its body was
        /// read whole) and what waited behind it is taken up; `resumeReads`: ask for the next read.
        case end(complete: Bool, resumeReads: Bool)
    }

    /// What to do with an event that may close the connection (a half-close, a quiesce).
    enum CloseAction: Equatable {
        case none
        case close
    }

    private(set) var state: State = .idle
    /// The client half-closed: no request follows the one in flight.
    private(set) var inputClosed = false
    private var queued = CircularBuffer<Queued>(initialCapacity: 0)
    /// Within ``nextQueued(writable:)``'s loop: a request answered synchronously by a part taken
    /// up does not start a nested loop (pipelined requests answered at once would otherwise
    /// recurse once per request).
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

    /// An event this machine did not allow (``StateFault``), not yet taken by the driver; the
    /// connection is closing from it on.
    private(set) var fault: StateFault?
    /// Whether a fault stops a debug build (the tests of the release path say `false`).
    private let trapsOnFault: Bool

    init(deadlines: ClientDeadlines, trapsOnFault: Bool = true) {
        self.deadlines = deadlines
        self.trapsOnFault = trapsOnFault
    }

    /// The fault, once: the driver closes the connection and counts it.
    mutating func takeFault() -> StateFault? {
        defer { fault = nil }
        return fault
    }

    /// An event the state does not allow: nothing more is taken up or written on the connection.
    private mutating func illegal(_ event: String) {
        fault = StateFault.illegal(.connection, "\(event) (\(state))", traps: trapsOnFault)
        state = .closing
    }

    // MARK: - the request in flight

    /// A request is in flight (the handler's `InFlightRequest` is set).
    var hasRequest: Bool {
        switch state {
        case .idle, .closing: false
        default: true
        }
    }

    /// The request's body has arrived whole (or there is no request).
    var bodyEnded: Bool {
        switch state {
        case .receiving, .answeringWhileReceiving, .drainingBody: false
        default: true
        }
    }

    /// The request's answer has begun (a head written).
    var answerStarted: Bool {
        switch state {
        case .answeringWhileReceiving, .answering, .drainingBody: true
        case .receiving, .awaitingAnswer, .idle, .closing: false
        }
    }

    /// The answer is written whole (the body may still arrive).
    var answerEnded: Bool { state == .drainingBody }

    var isClosing: Bool { state == .closing }

    /// Whether the connection ends with the answer in flight.
    var closesAfterAnswer: Bool {
        switch state {
        case .receiving(let close), .awaitingAnswer(let close), .answeringWhileReceiving(let close), .answering(let close): close
        case .idle, .drainingBody: false
        case .closing: true
        }
    }

    /// A new request's head; `keepAlive`: its version and `Connection` allow another after it;
    /// `expectsContinue`: it waits for `100 Continue` before it sends its body; `predatesHTTP11`:
    /// an HTTP/1.0 request.
    mutating func headReceived(keepAlive: Bool, expectsContinue: Bool = false, predatesHTTP11: Bool = false) {
        assert(state == .idle, "a head while a request is in flight or the connection closes")
        deadlines.headComplete()
        state = .receiving(closeAfterAnswer: !keepAlive)
        self.expectsContinue = expectsContinue
        self.predatesHTTP11 = predatesHTTP11
    }

    /// Whether `100 Continue` is to be sent now (the request's body is wanted): once per request
    /// that asked for it.
    mutating func continueDue() -> Bool {
        defer { expectsContinue = false }
        return expectsContinue
    }

    /// The request is refused. The connection closes after the refusal when `closing` (a body
    /// the gateway will not read follows), and when the client still waits for `100 Continue`
    /// with its body unsent: it may send the body after the refusal as well as not, and nothing
    /// could tell that body from the next request.
    mutating func refusing(closing: Bool) {
        if closing || expectsContinue && !bodyEnded { closeAfterAnswer() }
    }

    /// The request's body broke off (an error, a close) while it was still arriving and before
    /// any answer: the client's fault, counted like a broken body.
    var brokeOffMidBody: Bool { !answerStarted && !bodyEnded }

    /// The connection ends with the answer in flight.
    mutating func closeAfterAnswer() {
        switch state {
        case .receiving: state = .receiving(closeAfterAnswer: true)
        case .awaitingAnswer: state = .awaitingAnswer(closeAfterAnswer: true)
        case .answeringWhileReceiving: state = .answeringWhileReceiving(closeAfterAnswer: true)
        case .answering: state = .answering(closeAfterAnswer: true)
        case .closing: return  // it ends anyway
        case .idle, .drainingBody: illegal("no answer in flight to close after")
        }
    }

    /// The request's body arrived whole. Returns whether the request is done (its answer was
    /// already written): the handler records it and takes up what waited.
    mutating func endOfBody() -> Bool {
        switch state {
        case .receiving(let close): state = .awaitingAnswer(closeAfterAnswer: close)
        case .answeringWhileReceiving(let close): state = .answering(closeAfterAnswer: close)
        case .drainingBody:
            state = .idle
            return true
        case .closing: break
        case .idle, .awaitingAnswer, .answering: illegal("the end of a body that had ended")
        }
        return false
    }

    /// The answer's head is being written. Returns whether the connection closes after it (the
    /// head says `Connection: close`). `lengthKnown`: the answer's length is in its head; one of
    /// unknown length to an HTTP/1.0 client ends with the connection (it cannot take a chunked body).
    @discardableResult
    mutating func startAnswer(lengthKnown: @autoclosure () -> Bool = true) -> Bool {
        // Read only for an HTTP/1.0 client: the answer's fields are not scanned for the others.
        if predatesHTTP11 && !lengthKnown() { closeAfterAnswer() }
        switch state {
        case .receiving(let close): state = .answeringWhileReceiving(closeAfterAnswer: close)
        case .awaitingAnswer(let close): state = .answering(closeAfterAnswer: close)
        case .closing: break  // ends anyway: nothing is written after the close
        case .idle, .answeringWhileReceiving, .answering, .drainingBody: illegal("an answer begun twice or for no request")
        }
        return closesAfterAnswer
    }

    /// The answer is written whole. The connection closes after it when it was to, or when the
    /// client half-closed; else it waits for the rest of the body or takes up the next request.
    /// - Parameter writable: the client takes its answers (else reads stay held until it does).
    mutating func answerEnded(writable: Bool) -> AnswerEndAction {
        if closesAfterAnswer || inputClosed {
            state = .closing
            return .endAndClose
        }
        let complete = bodyEnded
        state = complete ? .idle : .drainingBody
        // Reads may have been held for the backend; the rest of the body is dropped at full
        // speed. (Held for pipelined requests instead: those are taken up first. And held while
        // the client leaves its answers unread.)
        var resume = false
        if !writable {
            reads.pause()
        } else if queued.isEmpty {
            resume = reads.open()
        }
        return .end(complete: complete, resumeReads: resume)
    }

    // MARK: - reading

    /// A part read from the client.
    mutating func read(_ part: HTTPServerRequestPart, writable: Bool) -> ReadAction {
        readBatchOpen = true
        deliveredInBatch = true
        if state == .closing { return .drop }
        if hasRequest && (bodyEnded || !queued.isEmpty) {
            // A pipelined request behind the one being answered; none follows a closing answer.
            guard !closesAfterAnswer else { return .drop }
            return hold(.part(part))
        }
        if state == .idle && (!queued.isEmpty || !writable) {
            // A request behind answers the client has not taken yet: it waits (in order).
            return hold(.part(part))
        }
        return .deliver
    }

    private mutating func hold(_ item: Queued) -> ReadAction {
        queued.append(item)
        reads.pause()
        return .hold
    }

    /// The end of a batch of reads. Returns the deadline the timer must fire by when this batch
    /// began a head without completing it (a head normally arrives whole in one read).
    mutating func readComplete(at now: NIODeadline) -> NIODeadline? {
        deadlines.noteRead(at: now)
        let partial = !deliveredInBatch && state == .idle
        deliveredInBatch = false
        readBatchOpen = false
        return partial ? deadlines.headStarted(at: now) : nil
    }

    /// The handler's `read(context:)`: whether to pass the read on now; otherwise it is held.
    mutating func readRequested() -> Bool {
        reads.admits()
    }

    /// Reads stop (the backend does not take the body as fast as it comes).
    mutating func pauseReads() {
        reads.pause()
    }

    /// Reads go on; returns whether a held read must be issued now.
    mutating func resumeReads() -> Bool {
        reads.open()
    }

    /// The parser refused what it read. Returns whether it is handled now (else it belongs to a
    /// pipelined request and waits for its turn; after a close it is the close's echo).
    mutating func parserFailed(_ error: HTTPParserError) -> Bool {
        if state == .closing { return false }
        if hasRequest && (bodyEnded || !queued.isEmpty) {
            queued.append(.parserError(error))
            return false
        }
        return true
    }

    /// The client half-closed. Waits behind what is queued; else: an idle connection closes now,
    /// one with a request closes once its answer is written. A connection already closing is left
    /// to finish writing its last answer: a client may half-close after its request and still read it.
    mutating func clientInputClosed() -> CloseAction {
        if !queued.isEmpty {
            queued.append(.inputClosed)
            return .none
        }
        return inputClosedInTurn()
    }

    private mutating func inputClosedInTurn() -> CloseAction {
        inputClosed = true
        guard state == .idle else { return .none }
        state = .closing
        return .close
    }

    /// Shutting down: idle connections close now, a request in flight is answered
    /// (`Connection: close`) and the connection closed; pipelined ones are dropped.
    mutating func quiesce() -> CloseAction {
        queued.removeAll()
        switch state {
        case .receiving, .awaitingAnswer, .answeringWhileReceiving, .answering:
            closeAfterAnswer()
            return .none
        case .idle, .drainingBody, .closing:
            // Idle, or answered with the rest of a body still coming: not waited for.
            state = .closing
            return .close
        }
    }

    /// The connection ends from the handler — an error, a timeout, a head the parser refused or
    /// that did not arrive in time (a plain refusal is written first): nothing more is taken up.
    mutating func closed() {
        state = .closing
    }

    /// The last answer's end is being written at `now`, the close to follow once it is: returns
    /// the deadline by which it closes all the same (``closeBy``).
    mutating func closingAfterLastAnswer(at now: NIODeadline) -> NIODeadline {
        assert(state == .closing, "a last answer on a connection that goes on")
        let deadline = now + deadlines.idle
        closeBy = deadline
        return deadline
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

    /// The next thing that waited, while it can be taken up: no request in flight with its body
    /// complete (its answer pending), and no request begun while the client has not taken the
    /// answers before it. A half-close taken up here is applied (``CloseAction``).
    mutating func nextQueued(writable: Bool) -> Queued? {
        guard state != .closing, !(hasRequest && bodyEnded), let next = queued.first else { return nil }
        if state == .idle, case .part(.head) = next, !writable { return nil }
        queued.removeFirst()
        return next
    }

    /// The loop of ``beginTakeUp(at:)`` is done: reads go on when nothing waits any more.
    /// Returns whether a held read must be issued now.
    mutating func endTakeUp() -> Bool {
        takingUp = false
        guard queued.isEmpty, state != .closing else { return false }
        return reads.open()
    }

    /// A half-close that waited in the queue, now in turn.
    mutating func queuedInputClosed() -> CloseAction {
        inputClosedInTurn()
    }

    /// The client took its answers (the channel is writable again) and no trip is relaying one:
    /// what waited goes on. Returns whether to take up the queue (else, whether a read is due).
    mutating func writable() -> (takeUp: Bool, read: Bool) {
        guard state != .closing else { return (false, false) }
        if queued.isEmpty { return (false, reads.open()) }
        return (true, false)
    }

    // MARK: - clocks

    /// The timer fired at `now`: which client clock ran out. A client silent while its answer is
    /// being prepared is waiting, not idle; a closing connection has only ``closeBy``.
    mutating func expired(at now: NIODeadline) -> ClientDeadlines.Expiry? {
        if state == .closing {
            guard let closeBy, now >= closeBy else { return nil }
            return .lastAnswerUnread
        }
        let expiry = deadlines.expired(at: now)
        if expiry == .idle && hasRequest && bodyEnded {
            deadlines.noteRead(at: now)
            return nil
        }
        return expiry
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
