import NIOCore
import NIOHTTP1
import ServerSupport

/// One client connection of the data plane, in the shape of swift-nio's
/// `HTTPServerPipelineHandler`: every event is a transition of the connection's
/// ``ConnectionStateMachine`` (framing, the order of pipelined requests, backpressure, clocks,
/// quiesce), and this handler performs what the transition returns. Each request head goes to the
/// ``GatewayResponder``, which decides once how it is answered; this handler carries the decision
/// out — a whole answer of the gateway's own (``answer(_:)``, every refusal through
/// ``refuse(_:closing:headers:)``), a pass-through trip whose answer is streamed back from an
/// ``UpstreamTrip``, or an ``ExchangeFlow`` that reports its one decision back. What a request
/// reports (metrics, log lines, audit, span) goes through the connection's ``RequestObserver``.
///
/// Everything here runs on the connection's event loop, and so does the upstream connection of
/// its trip: no locks, no hops between threads, except an exchange's one round trip to a worker.
///
/// Backpressure both ways: the client's body is read only as fast as the backend takes it, and
/// the backend's answer only as fast as the client takes it (``UpstreamTrip/pauseResponse()``).
final class GatewayConnectionHandler: ChannelDuplexHandler, UpstreamTripDelegate, ExchangeFlowDelegate, ClockedStream {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: GatewayCore
    private let pool: UpstreamConnectionPool
    private let responder: GatewayResponder
    /// The connection's TLS, given to each request (the client certificate's throttle key and audit line).
    private let tls: TLSSession?
    private let observer: RequestObserver
    private var ids: RequestIdentities
    private var context: ChannelHandlerContext?
    private var machine: ConnectionStateMachine
    /// The request in flight, from its head until it is recorded (which may follow the
    /// machine's `closing`: a connection closed under a request records it when it is inactive).
    private var request: InFlightRequest?
    private var timer: Scheduled<Void>?
    private var timerAt: NIODeadline = .distantFuture
    /// An HTTP/2 stream's: what its connection's streams share (the answer budget among them).
    private let streams: HTTP2Streams?
    /// The refusal of the head that comes next (``HTTP2MalformedRequest``).
    private var malformed: GatewayError?
    /// The trip reads its backend with a reservation of the connection's answer budget.
    private var reading = false
    /// The trip waits for a reservation (once per wait).
    private var waitingForBudget = false

    /// - Parameters:
    ///   - tls: the connection's TLS session, `nil` on a plain listener.
    ///   - probesOnly: the probe listener's: `/healthz`, `/readyz`, `/metrics` and nothing else.
    ///   - streams: an HTTP/2 stream's connection's shares: the id sequence that seeds each of its
    ///     streams' (``RequestIdentities``), the answer budget.
    init(
        core: GatewayCore, pool: UpstreamConnectionPool, tls: TLSSession? = nil, probesOnly: Bool = false, streams: HTTP2Streams? = nil
    ) {
        self.core = core
        self.pool = pool
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

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        machine.noteRead(at: context.eventLoop.now)
        arm(at: machine.deadlines.nextCheck)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        streams?.clock.forget(self)
        stopReading()
        self.context = nil
    }

    // MARK: - the client's request

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard machine.read(part, writable: context.channel.isWritable) == .deliver else { return }
        take(part)
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
        guard let context, machine.beginTakeUp(at: context.eventLoop.now) else { return }
        while let next = machine.nextQueued(writable: context.channel.isWritable) {
            switch next {
            case .part(let part): take(part)
            case .parserError(let error): parserFailed(error, context: context)
            case .inputClosed: if machine.queuedInputClosed() == .close { context.close(promise: nil) }
            }
        }
        if machine.endTakeUp() { context.read() }
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
        let decision = responder.respond(to: current, peer: context?.channel.remoteAddress, eventLoop: context!.eventLoop)
        if current.endsConnection { machine.closeAfterAnswer() }
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
        if machine.endOfBody() {
            // The answer was written before the body ended: the request is done.
            complete(current)
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
        guard let current = request, current.exchange === flow, context != nil, !machine.answerStarted, !machine.isClosing else { return }
        switch decision {
        case .forward(let head, let body): startTrip(head, body: body)
        case .refuse(let error): refuse(error)
        }
    }

    /// Sends the request to the backend and relays its answer (``UpstreamTripDelegate``).
    /// - Parameter body: the whole body, or `nil` to stream the client's body as it arrives.
    private func startTrip(_ head: HTTPRequestHead, body: ByteBuffer?) {
        guard let current = request, context != nil else { return }
        let trip = UpstreamTrip(client: core.upstream, pool: pool, head: head, body: body, delegate: self, observer: observer)
        current.trip = trip
        observer.tripStarted(current)
        if !machine.bodyEnded { current.body = body == nil ? .forward(trip) : .discard }
        continueIfExpected()
        // An HTTP/2 stream reads its backend with a reservation of the connection's answer
        // budget; without one, the backend's answer waits in its socket.
        if let budget = streams?.budget, !budget.acquire() {
            trip.pauseResponse()
            waitForBudget(trip, budget)
        } else {
            reading = streams != nil
        }
        trip.start(flushingLater: machine.readBatchOpen)
        if trip.wakeAt < timerAt { arm(at: trip.wakeAt) }
    }

    // MARK: - the backend's answer (UpstreamTripDelegate)

    func tripResponded(_ head: HTTPResponseHead) {
        guard let current = request, let context else { return }
        var headers = ProxyHeaders.clientResponse(head.headers, requestID: current.requestID)
        if machine.startAnswer(lengthKnown: headers.contains(name: "content-length")) {
            headers.replaceOrAdd(name: "Connection", value: "close")
        }
        observer.answering(current, status: Int(head.status.code))
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: current.head.answerVersion, status: head.status, headers: headers))), promise: nil)
    }

    func tripBody(_ part: ByteBuffer) {
        guard let context else { return }
        context.write(wrapOutboundOut(.body(.byteBuffer(part))), promise: nil)
        if let budget = streams?.budget, budget.isOvercommitted, let trip = request?.trip {
            trip.pauseResponse()
            stopReading()
            waitForBudget(trip, budget)
            context.flush()
        } else if !context.channel.isWritable {
            // Pause first: the flush may drain the buffer at once, and the writability change it
            // reports then is what resumes the backend's reads.
            request?.trip?.pauseResponse()
            stopReading()
            context.flush()
        }
    }

    func tripFlush() {
        context?.flush()
    }

    /// The paused trip reads its backend again once the connection's answer budget has room for
    /// a read and the stream can take more (its writability resumes it otherwise).
    private func waitForBudget(_ trip: UpstreamTrip, _ budget: HTTP2AnswerBudget) {
        guard !waitingForBudget else { return }
        waitingForBudget = true
        budget.waitForRoom { [weak self, weak trip] in
            guard let self else { return false }
            waitingForBudget = false
            guard let trip, request?.trip === trip, !reading, let context, context.channel.isWritable, budget.acquire() else { return false }
            reading = true
            trip.resumeResponse()
            return true
        }
    }

    /// The stream can take more of the trip's answer: it reads on (an HTTP/2 stream's with a
    /// reservation of the connection's answer budget, or once one is free).
    private func resume(_ trip: UpstreamTrip) {
        guard let budget = streams?.budget, !reading else {
            trip.resumeResponse()
            return
        }
        if budget.acquire() {
            reading = true
            trip.resumeResponse()
        } else {
            waitForBudget(trip, budget)
        }
    }

    /// The trip no longer reads its backend: its reservation goes back to the connection.
    private func stopReading() {
        guard reading else { return }
        reading = false
        streams?.budget.giveBack()
    }

    func tripFinished() {
        guard let current = request else { return }
        current.trip = nil
        stopReading()
        observer.tripEnded(current, failure: nil)
        // A backend may answer before it has read the whole body: the rest of it is dropped, and
        // the request is complete once it has arrived (``endOfBody()``).
        current.body = .discard
        endAnswer()
    }

    func tripFailed(_ failure: UpstreamFailure, responseStarted: Bool) {
        guard let current = request else { return }
        current.trip = nil
        stopReading()
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
        if machine.resumeReads() { context?.read() }
    }

    func tripWake(at deadline: NIODeadline) {
        if deadline < timerAt { arm(at: deadline) }
    }

    // MARK: - answering

    /// Sends `100 Continue` to a client waiting for it, once its body is wanted.
    private func continueIfExpected() {
        guard request != nil, let context, machine.continueDue() else { return }
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
    }

    /// Refuses the request in flight (rendered and reported by the ``RequestObserver``); its
    /// trip or exchange, if any, is dropped.
    /// - Parameter closing: close after the answer (a body the gateway will not read follows).
    private func refuse(_ error: GatewayError, closing: Bool = false, headers: [(String, String)] = []) {
        guard let current = request, !machine.answerStarted, !machine.isClosing else { return }
        var response = observer.refused(error, request: current)
        response.headers.insert(contentsOf: headers, at: 0)
        machine.refusing(closing: closing)
        current.dropWork()
        answer(response)
    }

    /// A whole answer of the gateway's own.
    private func answer(_ response: GatewayResponse) {
        guard let current = request, !machine.answerStarted, !machine.isClosing else { return }
        machine.startAnswer()
        observer.answering(current, status: response.status)
        writeHeadAndBody(
            response, requestID: current.requestID, version: current.head.answerVersion, withBody: current.head.method != .HEAD,
            closing: machine.closesAfterAnswer)
        endAnswer()
    }

    /// The head and body of a whole answer of the gateway's own (the end follows).
    private func writeHeadAndBody(_ response: GatewayResponse, requestID: String, version: HTTPVersion, withBody: Bool, closing: Bool) {
        guard let context else { return }
        var headers = HTTPHeaders()
        headers.reserveCapacity(4 + response.headers.count)
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.readableBytes))
        headers.add(name: "X-Request-Id", value: requestID)
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if closing { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        if withBody { context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil) }
    }

    /// The answer is written whole: the connection closes after it, or the request is done once
    /// its body has arrived too.
    private func endAnswer() {
        guard let current = request, let context else { return }
        switch machine.answerEnded(writable: context.channel.isWritable) {
        case .endAndClose:
            record(current)
            endAndClose()
        case .end(let complete, let resumeReads):
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            if resumeReads { context.read() }
            if complete { self.complete(current) }
        }
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
        stopReading()
        observer.finished(current)
    }

    // MARK: - connection events

    func channelReadComplete(context: ChannelHandlerContext) {
        if let deadline = machine.readComplete(at: context.eventLoop.now), deadline < timerAt { arm(at: deadline) }
        request?.trip?.flush()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested() { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if let trip = request?.trip {
                resume(trip)
            } else {
                // The client took its answers: what waited behind them goes on.
                let next = machine.writable()
                if next.takeUp { takeUpQueued() } else if next.read { context.read() }
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            if machine.clientInputClosed() == .close { context.close(promise: nil) }
            return
        }
        if event is ChannelShouldQuiesceEvent {
            if machine.quiesce() == .close { context.close(promise: nil) }
            return
        }
        if let event = event as? HTTP2MalformedRequest {
            malformed = event.error
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: - timeouts

    /// Sets the connection's timer for `deadline`; an HTTP/2 stream's is its connection's one
    /// timer for all its streams (``HTTP2StreamClock``).
    private func arm(at deadline: NIODeadline) {
        guard let context, deadline != .distantFuture else { return }
        timerAt = deadline
        if let clock = streams?.clock {
            clock.wake(self, at: deadline)
            return
        }
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.clockDue()
        }
    }

    /// The connection's one timer, due at ``nextWake``: the client's clocks and the backend
    /// trip's (``UpstreamTrip/wakeAt``), so no request costs a timer of its own.
    private var nextWake: NIODeadline {
        min(machine.nextCheck, request?.trip?.wakeAt ?? .distantFuture)
    }

    /// The timer's deadline is due (an HTTP/2 stream's through its connection's clock, ``ClockedStream``).
    func clockDue() {
        timer = nil
        timerAt = .distantFuture
        guard let now = context?.eventLoop.now else { return }
        if !machine.isClosing, let trip = request?.trip, trip.wakeAt <= now {
            // A trip that fails here is answered (or its connection closed) before the client's clocks are read.
            trip.wake(now: now)
        }
        switch machine.expired(at: now) {
        case .lastAnswerUnread:
            // Its last answer still unwritten: the client stopped reading (see ``endAndClose()``).
            context?.close(promise: nil)
        case .header:
            headerTimedOut()
        case .idle:
            if request != nil { clientBodyFailed() } else { closeConnection() }
        case nil:
            arm(at: nextWake)
        }
    }

    /// A head begun but not complete within `header-timeout`: `408 header_timeout`, closed.
    private func headerTimedOut() {
        guard context != nil else { return }
        machine.closed()
        let (response, requestID) = observer.headerTimedOut(ids: &ids)
        writeHeadAndBody(response, requestID: requestID, version: .http1_1, withBody: true, closing: true)
        endAndClose()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
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
        if machine.parserFailed(parserError) { parserFailed(parserError, context: context) }
    }

    private func parserFailed(_ parserError: HTTPParserError, context: ChannelHandlerContext) {
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
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        endAndClose()
    }

    /// Ends the last answer and closes the connection once it is written — or after
    /// `idle-timeout`, when the client has not taken it by then (``closeBy``).
    private func endAndClose() {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        let deadline = machine.closingAfterLastAnswer(at: context.eventLoop.now)
        if deadline < timerAt { arm(at: deadline) }
    }

    private func closeConnection() {
        machine.closed()
        context?.close(promise: nil)
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
    func channelInactive(context: ChannelHandlerContext) {
        if let current = request {
            current.dropWork()
            if machine.brokeOffMidBody { brokeOffMidBody(current) }
            record(current)
        }
        machine.closed()
        context.fireChannelInactive()
    }
}
