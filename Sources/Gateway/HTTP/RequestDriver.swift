import NIOCore
import NIOHTTP1
import ServerSupport

/// Where a ``RequestDriver`` reads its requests and writes their answers: an HTTP/1.1
/// connection (``GatewayConnectionHandler``) or one stream of an HTTP/2 connection
/// (``HTTP2Stream``, whose frames are read and written by its connection's handler, without a
/// channel of its own). On the connection's event loop only.
protocol RequestTransport: AnyObject {
    /// Whether the client takes what is written as fast as it comes (else answers wait).
    var isWritable: Bool { get }
    var remoteAddress: SocketAddress? { get }
    func write(_ part: HTTPServerResponsePart)
    func flush()
    /// Writes `part` and flushes; `thenClose`: closes once it is written.
    func writeAndFlush(_ part: HTTPServerResponsePart, thenClose: Bool)
    /// Asks for what the client sends next (reads that were held back).
    func read()
    /// Ends the connection (an HTTP/2 stream: resets it, unless it is over).
    func close()
    /// Whether the trip may read its backend's answer now. An HTTP/2 stream reads with a
    /// reservation of its connection's answer budget (``HTTP2AnswerBudget``): held already, taken
    /// now, or else waited for — the driver's ``RequestDriver/resumeTrip()`` once taken.
    func mayRead() -> Bool
    /// The trip no longer reads its backend (an HTTP/2 stream gives its reservation back).
    func stoppedReading()
    /// The answers held for the client leave no room (an HTTP/2 connection's budget
    /// overcommitted): the trip pauses, and the transport gives its reservation back and resumes
    /// the trip once there is room again (``readWhenRoom()``).
    var holdsTooMuch: Bool { get }
    func readWhenRoom()
}

/// The requests of one client connection or HTTP/2 stream: every event goes into the
/// connection's ``ConnectionStateMachine`` (framing, the order of pipelined requests,
/// backpressure, clocks, quiesce) and comes back as one ``ConnectionStateMachine/Action``, which
/// ``run(_:)`` carries out in one switch. Besides the machine it holds the request in flight's
/// context (``InFlightRequest``: what it is, its trip or exchange, its record) and its I/O (the
/// transport, the timer), no flags of its own. Each request head goes to the
/// ``GatewayResponder``, which decides once how it is answered; this driver carries the decision
/// out — a whole answer of the gateway's own (``answer(_:)``, every refusal through
/// ``refuse(_:closing:headers:)``), a pass-through trip whose answer is streamed back from an
/// ``UpstreamTrip``, or an ``ExchangeFlow`` that reports its one decision back. What a request
/// reports (metrics, log lines, audit, span) goes through the connection's ``RequestObserver``.
/// The same driver serves both protocols, so an HTTP/2 request goes through the same responder,
/// exchange and trip as an HTTP/1.1 one; its ``RequestTransport`` is what differs.
///
/// Everything here runs on the connection's event loop, and so does the upstream connection of
/// its trip: no locks, no hops between threads, except an exchange's one round trip to a worker.
///
/// Backpressure both ways: the client's body is read only as fast as the backend takes it, and
/// the backend's answer only as fast as the client takes it (``UpstreamTrip/pauseResponse()``).
final class RequestDriver: UpstreamTripDelegate, ExchangeFlowDelegate, ClockedStream {
    private let core: GatewayCore
    private let pool: UpstreamConnectionPool
    private let responder: GatewayResponder
    /// The connection's TLS, given to each request (the client certificate's throttle key and audit line).
    private let tls: TLSSession?
    private let observer: RequestObserver
    private var ids: RequestIdentities
    private let eventLoop: any EventLoop
    /// Set from ``attach(_:)`` to ``detach()``.
    private var transport: (any RequestTransport)?
    private var machine: ConnectionStateMachine
    /// The request in flight, from its head until it is recorded (which may follow the
    /// machine's `closing`: a connection closed under a request records it when it is inactive).
    private var request: InFlightRequest?
    private var timer: Scheduled<Void>?
    private var timerAt: NIODeadline = .distantFuture
    /// An HTTP/2 stream's: what its connection's streams share (their id seeds, their clock).
    private let streams: HTTP2Streams?
    /// The refusal of the head that comes next (``refuseNextHead(_:)``).
    private var malformed: GatewayError?

    /// - Parameters:
    ///   - tls: the connection's TLS session, `nil` on a plain listener.
    ///   - probesOnly: the probe listener's: `/healthz`, `/readyz`, `/metrics` and nothing else.
    ///   - streams: an HTTP/2 stream's connection's shares: the id sequence that seeds each of its
    ///     streams' (``RequestIdentities``), the clock.
    init(
        core: GatewayCore, eventLoop: any EventLoop, tls: TLSSession? = nil, probesOnly: Bool = false, streams: HTTP2Streams? = nil
    ) {
        self.core = core
        self.eventLoop = eventLoop
        pool = core.upstream.pool(on: eventLoop)
        self.tls = tls
        self.streams = streams
        responder = GatewayResponder(core: core, probesOnly: probesOnly)
        observer = RequestObserver(core: core)
        ids = streams.map { RequestIdentities(seededBy: &$0.seeds) } ?? RequestIdentities()
        let configuration = core.configuration
        machine = ConnectionStateMachine(
            deadlines: ClientDeadlines(
                idle: TimeAmount(seconds: configuration.idleTimeout), header: TimeAmount(seconds: configuration.headerTimeout),
                now: .uptimeNanoseconds(0)))
    }

    /// The connection (or stream) is set up: the client's clocks start.
    func attach(_ transport: any RequestTransport) {
        self.transport = transport
        machine.noteRead(at: eventLoop.now)
        arm(at: machine.nextCheck)
    }

    /// The connection (or stream) is gone; nothing is written any more.
    func detach() {
        timer?.cancel()
        timer = nil
        streams?.clock.forget(self)
        transport?.stoppedReading()
        transport = nil
    }

    // MARK: - the client's request

    /// A part read from the client.
    func received(_ part: HTTPServerRequestPart) {
        guard let transport else { return }
        run(machine.read(part, writable: transport.isWritable))
    }

    private func take(_ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head): begin(head)
        case .body(let part): body(part)
        case .end: endOfBody()
        }
    }

    /// Takes up what waited behind the request just finished, as far as the machine lets it
    /// (``ConnectionStateMachine/nextQueued(writable:)``); reads resume when nothing is left.
    private func takeUpQueued() {
        guard let transport, machine.beginTakeUp(at: eventLoop.now) else { return }
        while let next = machine.nextQueued(writable: transport.isWritable) { run(next) }
        run(machine.endTakeUp())
    }

    /// A new request: the responder decides how it is answered, and that is carried out.
    private func begin(_ head: HTTPRequestHead) {
        // An HTTP/2 stream carries one request: "keep-alive" only means its end is not a close.
        machine.headReceived(
            keepAlive: head.version.major >= 2 || head.isKeepAlive, expectsContinue: head.expectsContinue, predatesHTTP11: head.predatesHTTP11)
        let current = observer.begin(head, ids: &ids)
        current.tls = tls
        request = current
        if let error = malformed {
            malformed = nil
            refuse(error, closing: true)
            return
        }
        let decision = responder.respond(to: current, peer: transport?.remoteAddress, eventLoop: eventLoop)
        if current.endsConnection {
            guard run(machine.closeAfterAnswer()) else { return }
        }
        switch decision {
        case .answer(let response):
            answer(response)
        case .refuse(let error, let closing, let headers):
            refuse(error, closing: closing, headers: headers)
        case .passThrough(let upstreamHead, let streamsBody):
            startTrip(upstreamHead, body: streamsBody ? nil : ByteBuffer())
        case .exchange(let flow):
            current.exchange = flow
            current.body = .collect(flow)
            flow.whenDecided(tell: self)
            continueIfExpected()
        }
    }

    private func body(_ part: ByteBuffer) {
        guard let current = request, !machine.bodyEnded else { return }
        switch current.body {
        case .discard:
            return
        case .forward(let trip):
            trip.send(part)
            if !trip.wantsBody {
                // Pause first (see ``tripBody(_:)``): the flush may make the backend writable again.
                machine.pauseReads()
                trip.flush()
            }
        case .collect(let flow):
            do throws(GatewayError) {
                try flow.receive(part)
            } catch {
                refuse(error, closing: true)
            }
        }
    }

    private func endOfBody() {
        guard let current = request else { return }
        let action = machine.endOfBody()
        guard action == .none else {
            // The answer was written before the body ended (the request is done), or a fault.
            run(action)
            return
        }
        let body = current.body
        current.body = .discard
        switch body {
        case .forward(let trip): trip.end()
        case .collect(let flow): flow.bodyComplete()
        case .discard: break
        }
    }

    // MARK: - what the responder decided

    /// The exchange's decision, when it is still the request being answered (``ExchangeFlowDelegate``).
    func exchange(_ flow: ExchangeFlow, decided decision: ExchangeFlow.Decision) {
        guard let current = request, current.exchange === flow, transport != nil, !machine.answerStarted, !machine.isClosing else { return }
        switch decision {
        case .forward(let head, let body): startTrip(head, body: body)
        case .refuse(let error): refuse(error)
        }
    }

    /// Sends the request to the backend and relays its answer (``UpstreamTripDelegate``).
    /// - Parameter body: the whole body, or `nil` to stream the client's body as it arrives.
    private func startTrip(_ head: HTTPRequestHead, body: ByteBuffer?) {
        guard let current = request, let transport else { return }
        let trip = UpstreamTrip(client: core.upstream, pool: pool, head: head, body: body, delegate: self, observer: observer)
        current.trip = trip
        observer.tripStarted(current)
        if !machine.bodyEnded { current.body = body == nil ? .forward(trip) : .discard }
        continueIfExpected()
        // Without room for its answer (an HTTP/2 connection's budget), the backend's answer
        // waits in its socket.
        if !transport.mayRead() { trip.pauseResponse() }
        trip.start(flushingLater: machine.readBatchOpen)
        if trip.wakeAt < timerAt { arm(at: trip.wakeAt) }
    }

    // MARK: - the backend's answer (UpstreamTripDelegate)

    func tripResponded(_ head: HTTPResponseHead) {
        guard let current = request, let transport else { return }
        var headers = ProxyHeaders.clientResponse(head.headers, requestID: current.requestID)
        guard run(machine.startAnswer(lengthKnown: headers.contains(name: "content-length"))) else { return }
        if machine.closesAfterAnswer { headers.replaceOrAdd(name: "Connection", value: "close") }
        observer.answering(current, status: Int(head.status.code))
        transport.write(.head(HTTPResponseHead(version: current.head.answerVersion, status: head.status, headers: headers)))
    }

    func tripBody(_ part: ByteBuffer) {
        guard let transport else { return }
        transport.write(.body(.byteBuffer(part)))
        if transport.holdsTooMuch, let trip = request?.trip {
            // Pause first: the room may be there at once, and resumes the trip.
            trip.pauseResponse()
            transport.readWhenRoom()
            transport.flush()
        } else if !transport.isWritable {
            // Pause first: the flush may drain the buffer at once, and the writability change it
            // reports then is what resumes the backend's reads.
            request?.trip?.pauseResponse()
            transport.stoppedReading()
            transport.flush()
        }
    }

    func tripFlush() {
        transport?.flush()
    }

    /// The transport has room for the trip's answer again (``RequestTransport/mayRead()``).
    func resumeTrip() {
        request?.trip?.resumeResponse()
    }

    /// A trip is under way: its answer is read, or waits for room.
    var hasTrip: Bool { request?.trip != nil }

    func tripFinished() {
        guard let current = request else { return }
        current.trip = nil
        transport?.stoppedReading()
        observer.tripEnded(current, failure: nil)
        // A backend may answer before it has read the whole body: the rest of it is dropped, and
        // the request is complete once it has arrived (``endOfBody()``).
        current.body = .discard
        endAnswer()
    }

    func tripFailed(_ failure: UpstreamFailure, responseStarted: Bool) {
        guard let current = request else { return }
        current.trip = nil
        transport?.stoppedReading()
        observer.tripEnded(current, failure: failure)
        let error = failure.gatewayError
        guard responseStarted else {
            refuse(error, closing: !machine.bodyEnded)
            return
        }
        // Part of the answer is out: the client can only learn of the failure by the close.
        // The client's own slowness is still counted under its code, as a refusal counts an
        // answered failure (the trip counts the backend's failures).
        if failure.kind == .clientTimeout { observer.failed(error.code, request: current) }
        closeConnection()
    }

    func tripWantsBody() {
        run(machine.resumeReads())
    }

    func tripWake(at deadline: NIODeadline) {
        if deadline < timerAt { arm(at: deadline) }
    }

    // MARK: - answering

    /// Sends `100 Continue` to a client waiting for it, once its body is wanted.
    private func continueIfExpected() {
        guard request != nil else { return }
        run(machine.bodyWanted())
    }

    /// Refuses the request in flight (rendered and reported by the ``RequestObserver``); its
    /// trip or exchange, if any, is dropped.
    /// - Parameter closing: close after the answer (a body the gateway will not read follows).
    private func refuse(_ error: GatewayError, closing: Bool = false, headers: [(String, String)] = []) {
        guard let current = request, !machine.answerStarted, !machine.isClosing else { return }
        var response = observer.refused(error, request: current)
        response.headers.insert(contentsOf: headers, at: 0)
        guard run(machine.refusing(closing: closing)) else { return }
        current.dropWork()
        answer(response)
    }

    /// A whole answer of the gateway's own.
    private func answer(_ response: GatewayResponse) {
        guard let current = request, !machine.answerStarted, !machine.isClosing else { return }
        guard run(machine.startAnswer()) else { return }
        observer.answering(current, status: response.status)
        writeHeadAndBody(
            response, requestID: current.requestID, version: current.head.answerVersion, withBody: current.head.method != .HEAD,
            closing: machine.closesAfterAnswer)
        endAnswer()
    }

    /// The head and body of a whole answer of the gateway's own (the end follows).
    private func writeHeadAndBody(_ response: GatewayResponse, requestID: String, version: HTTPVersion, withBody: Bool, closing: Bool) {
        guard let transport else { return }
        var headers = HTTPHeaders()
        headers.reserveCapacity(4 + response.headers.count)
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.readableBytes))
        headers.add(name: "X-Request-Id", value: requestID)
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if closing { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        transport.write(.head(HTTPResponseHead(version: version, status: status, headers: headers)))
        if withBody { transport.write(.body(.byteBuffer(response.body))) }
    }

    /// The answer is written whole: the connection closes after it, or the request is done once
    /// its body has arrived too.
    private func endAnswer() {
        guard request != nil, let transport else { return }
        run(machine.answerEnded(writable: transport.isWritable))
    }

    /// The request is answered and its body read: recorded, and what waited behind it taken up.
    private func complete(_ current: InFlightRequest) {
        // Writing the end may have closed the connection and recorded the request already.
        guard request === current else { return }
        record(current)
        if machine.hasQueued { takeUpQueued() }
    }

    /// The request's one report (``RequestObserver/finished(_:)``); it is no longer in flight.
    private func record(_ current: InFlightRequest) {
        request = nil
        transport?.stoppedReading()
        observer.finished(current)
    }

    // MARK: - what the machine decided

    /// Carries out what the machine decided. Returns false when it refused the event
    /// (``ConnectionStateMachine/Action/fault(_:)``): the caller goes no further.
    @discardableResult
    private func run(_ action: ConnectionStateMachine.Action) -> Bool {
        switch action {
        case .none:
            return true
        case .deliver(let part):
            take(part)
        case .read:
            transport?.read()
        case .takeUpQueued:
            takeUpQueued()
        case .writeContinue:
            transport?.writeAndFlush(.head(HTTPResponseHead(version: .http1_1, status: .continue)), thenClose: false)
        case .complete:
            if let current = request { complete(current) }
        case .endAnswer(let complete, let read):
            let current = request
            transport?.writeAndFlush(.end(nil), thenClose: false)
            if read { transport?.read() }
            if complete, let current { self.complete(current) }
        case .endAnswerAndClose:
            if let current = request { record(current) }
            endAndClose()
        case .close:
            transport?.close()
        case .wake(let deadline):
            // The connection's one timer serves the client's clocks and the backend trip's
            // (``UpstreamTrip/wakeAt``), so no request costs a timer of its own.
            let next = min(deadline, request?.trip?.wakeAt ?? .distantFuture)
            if next < timerAt { arm(at: next) }
        case .timedOut(.lastAnswerUnread):
            // Its last answer still unwritten: the client stopped reading (see ``endAndClose()``).
            transport?.close()
        case .timedOut(.header):
            headerTimedOut()
        case .timedOut(.idle):
            if request != nil { clientBodyFailed() } else { closeConnection() }
        case .unparsable(let error):
            parserFailed(error)
        case .fault(let fault):
            // A bug of the gateway's in a release build: counted and logged, the request's work
            // dropped, the connection (or stream) closed.
            observer.stateFault(fault, request: request)
            request?.dropWork()
            closeConnection()
            return false
        }
        return true
    }

    // MARK: - connection events

    /// The end of a batch of reads: the client's clocks, and the trip's writes flushed.
    func readComplete() {
        run(machine.readComplete(at: eventLoop.now))
        request?.trip?.flush()
    }

    /// Whether the client may be read now (else the read is held until the backend takes more).
    func readRequested() -> Bool {
        machine.readRequested()
    }

    /// The client takes what is written again.
    func becameWritable() {
        if let trip = request?.trip {
            if transport?.mayRead() == true { trip.resumeResponse() }
        } else {
            // The client took its answers: what waited behind them goes on.
            run(machine.writable())
        }
    }

    /// The client sends nothing more (a half-close).
    func inputClosed() {
        run(machine.clientInputClosed())
    }

    /// The server is shutting down: the connection ends once its request is answered.
    func quiesce() {
        run(machine.quiesce())
    }

    /// The head that comes next is refused with `error` (an HTTP/2 head read strictly, ``HTTP2Stream``).
    func refuseNextHead(_ error: GatewayError) {
        malformed = error
    }

    // MARK: - timeouts

    /// Sets the connection's timer for `deadline`; an HTTP/2 stream's is its connection's one
    /// timer for all its streams (``HTTP2StreamClock``).
    private func arm(at deadline: NIODeadline) {
        guard transport != nil, deadline != .distantFuture else { return }
        timerAt = deadline
        if let clock = streams?.clock {
            clock.wake(self, at: deadline)
            return
        }
        timer?.cancel()
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.clockDue()
        }
    }

    /// The timer's deadline is due (an HTTP/2 stream's through its connection's clock, ``ClockedStream``).
    func clockDue() {
        timer = nil
        timerAt = .distantFuture
        guard transport != nil else { return }
        let now = eventLoop.now
        if !machine.isClosing, let trip = request?.trip, trip.wakeAt <= now {
            // A trip that fails here is answered (or its connection closed) before the client's clocks are read.
            trip.wake(now: now)
        }
        run(machine.expired(at: now))
    }

    /// A head begun but not complete within `header-timeout`: `408 header_timeout`, closed.
    private func headerTimedOut() {
        guard transport != nil else { return }
        machine.closed()
        let (response, requestID) = observer.headerTimedOut(ids: &ids)
        writeHeadAndBody(response, requestID: requestID, version: .http1_1, withBody: true, closing: true)
        endAndClose()
    }

    /// An error on the connection: the parser's (answered in its request's turn) or a broken connection.
    func failed(_ error: any Error) {
        guard !machine.isClosing else { return }
        guard let parserError = error as? HTTPParserError else {
            // The connection broke (a reset): a request whose body was still arriving, with no
            // answer begun, is counted like a broken body when it is recorded.
            if let current = request {
                current.dropWork()
                if machine.brokeOffMidBody { brokeOffMidBody(current) }
            }
            closeConnection()
            return
        }
        // Else it belongs to a pipelined request: answered in its turn.
        run(machine.parserFailed(parserError))
    }

    private func parserFailed(_ parserError: HTTPParserError) {
        if request != nil {
            // The head was fine, the body is not (a bad chunk size, a connection cut mid-body).
            clientBodyFailed()
            return
        }
        // The head itself is not HTTP/1.1 (a smuggling attempt among others): the parser's
        // plain refusal, written before the decoder closes the connection. Closing from here on:
        // the write may report a writability change, which must not take up what is queued.
        machine.closed()
        let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
        let headers = HTTPHeaders([("Connection", "close"), ("Content-Length", "0")])
        transport?.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        endAndClose()
    }

    /// Ends the last answer and closes the connection once it is written — or after
    /// `idle-timeout`, when the client has not taken it by then (``closeBy``).
    private func endAndClose() {
        guard let transport else { return }
        transport.writeAndFlush(.end(nil), thenClose: true)
        run(machine.closingAfterLastAnswer(at: eventLoop.now))
    }

    private func closeConnection() {
        machine.closed()
        transport?.close()
    }

    /// The client's body broke off (a malformed chunk, a stall past the idle timeout, a close):
    /// the client's fault, `400 malformed_request`; the backend's connection is dropped.
    private func clientBodyFailed() {
        guard let current = request else { return }
        current.dropWork()
        if machine.answerStarted {
            observer.failed(GatewayError.unreadableBody.code, request: current)
            record(current)
            closeConnection()
        } else {
            refuse(.unreadableBody, closing: true)
        }
    }

    /// Gone mid-body before any answer: counted like a broken body.
    private func brokeOffMidBody(_ current: InFlightRequest) {
        observer.failed(GatewayError.unreadableBody.code, request: current, status: 400, reason: true)
    }

    /// Also reached from inside a write to a connection the client has closed: the request is
    /// recorded here once, and the code that was writing finds no request left.
    func inactive() {
        if let current = request {
            current.dropWork()
            if machine.brokeOffMidBody { brokeOffMidBody(current) }
            record(current)
        }
        machine.closed()
    }
}
