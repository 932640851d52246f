import Dispatch
import NIOCore
import NIOHTTP1
import ServerSupport

/// One client connection of the data plane, in the shape of swift-nio's
/// `HTTPServerPipelineHandler`: framing, the order of pipelined requests, backpressure both
/// ways, deadlines and quiesce. Each request's head is parsed and routed here, then handed to
/// ``GatewayResponder``, which answers it locally, refuses it, passes it through or admits a token
/// exchange (``ExchangeFlow``); whatever answers, it is written here — a whole answer of the
/// gateway's own (``answer(_:)``, every refusal through ``refuse(_:closing:extraHeaders:)``), or
/// the backend's answer streamed back from an ``UpstreamTrip``.
///
/// Everything here runs on the connection's event loop, and so does the upstream connection of
/// its trip: no locks, no hops between threads, except an exchange's one round trip to a worker.
///
/// One request at a time: the parts of a pipelined request that arrive while the one before is
/// still being answered wait in ``queued`` (reads stop meanwhile) and are taken up in order once
/// that answer is written. NIO's `HTTPServerPipelineHandler` would do the same, but it withholds
/// the connection's reads during every answer, which costs two `epoll_ctl` calls per request
/// whether the client pipelines or not; here reads stop only when something is queued.
///
/// Backpressure both ways: the client's body is read only as fast as the backend takes it, and
/// the backend's answer only as fast as the client takes it (``UpstreamTrip/pauseResponse()``).
/// And no request is begun while the client has not taken the answers before it (the channel
/// is not writable): a client that pipelines `GET /metrics` without ever reading would otherwise
/// have the gateway pile up its answers in memory, a few bytes of request for kilobytes of answer.
final class GatewayConnectionHandler: ChannelDuplexHandler, UpstreamTripDelegate {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What arrived for later: parts of pipelined requests, and what followed them.
    private enum Queued {
        case part(HTTPServerRequestPart)
        case parserError(HTTPParserError)
        case inputClosed
    }

    private let core: GatewayCore
    private let pool: UpstreamConnectionPool
    private let responder: GatewayResponder
    private var context: ChannelHandlerContext?
    private var request: InFlightRequest?
    private var requestIDs = RequestIDSequence()
    private var traceIDs = TraceIDSequence()
    private var reads = ReadGate()
    /// The client half-closed: no request follows the one in flight.
    private var inputClosed = false
    /// The connection is being closed: later errors and events are the close's echo.
    private var closing = false
    /// When a connection closing after its last answer (``endAndClose()``) is closed whether or
    /// not the client took that answer: a client that never reads would otherwise keep it open.
    private var closeBy: NIODeadline?
    /// Within a batch of reads: `channelReadComplete` follows and flushes the trip's writes.
    private var readBatchOpen = false
    /// A part arrived in the current batch of reads (a batch without one carried part of a head).
    private var deliveredInBatch = false
    /// Pipelined requests behind the one in flight, in order (see the type's documentation).
    private var queued = CircularBuffer<Queued>(initialCapacity: 0)
    /// Within ``takeUpQueued()``: a request answered meanwhile does not start another round.
    private var takingUpQueued = false
    private var deadlines: ClientDeadlines
    private var timer: Scheduled<Void>?
    private var timerAt: NIODeadline = .distantFuture

    init(core: GatewayCore, pool: UpstreamConnectionPool) {
        self.core = core
        self.pool = pool
        responder = GatewayResponder(core: core)
        deadlines = ClientDeadlines(
            idle: Self.amount(core.configuration.idleTimeout),
            header: Self.amount(core.configuration.headerTimeout), now: .now())
    }

    private static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1e9))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        deadlines.noteRead(at: .now())
        arm(at: deadlines.nextCheck)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    // MARK: the client's request

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readBatchOpen = true
        deliveredInBatch = true
        // Nothing is taken up on a connection being closed (after a refusal that closes, a
        // header timeout, a closing answer): what a client sent after it is never forwarded.
        guard !closing else { return }
        let part = unwrapInboundIn(data)
        if let current = request, current.bodyEnded || !queued.isEmpty {
            // A pipelined request behind the one being answered; none follows a closing answer.
            guard !current.closeAfterResponse else { return }
            queued.append(.part(part))
            pauseReading()
            return
        }
        if request == nil && (!queued.isEmpty || !context.channel.isWritable) {
            // A request behind answers the client has not taken yet: it waits (in order).
            queued.append(.part(part))
            pauseReading()
            return
        }
        take(part)
    }

    private func take(_ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head): begin(head)
        case .body(let part): body(part)
        case .end: endOfBody()
        }
    }

    /// Takes up what waited behind the request just finished, until a request is in flight
    /// with its body complete (its answer pending), the next request would begin while the
    /// client has not taken the answers before it (resumed by ``channelWritabilityChanged(context:)``),
    /// or nothing is left; reads resume then.
    private func takeUpQueued() {
        guard !takingUpQueued, let context else { return }
        // Reads were held for what waited here: the client's idle clock starts again now, not
        // at the read that brought it (which may be older than idle-timeout).
        deadlines.noteRead(at: .now())
        takingUpQueued = true
        defer { takingUpQueued = false }
        while !closing, request.map({ !$0.bodyEnded }) ?? true, let next = queued.first {
            if request == nil, case .part(.head) = next, !context.channel.isWritable { return }
            queued.removeFirst()
            switch next {
            case .part(let part): take(part)
            case .parserError(let error): parserFailed(error, context: context)
            case .inputClosed: clientInputClosed()
            }
        }
        if queued.isEmpty && !closing { resumeReading() }
    }

    /// A new request: its target parsed once (routed on, and forwarded, in this one spelling —
    /// see ``RequestTarget``), its framing checked, its route decided, and the responder given it.
    private func begin(_ head: HTTPRequestHead) {
        deadlines.headComplete()
        let started = DispatchTime.now().uptimeNanoseconds
        let trace: TraceContext, span: (any RequestSpan)?
        if let tracing = core.tracing, !GatewayRoute.isPlainOperational(uri: head.uri) {
            (trace, span) = TraceContext.traced(head.headers, tracing: tracing, sampler: core.traceSampler, ids: &traceIDs, at: started)
        } else {
            (trace, span) = (TraceContext.make(head.headers, ids: &traceIDs), nil)
        }
        let current = InFlightRequest(
            head: head, requestID: RequestID.make(incoming: head.headers.first(name: "x-request-id"), fresh: &requestIDs),
            trace: trace, span: span, started: started)
        request = current
        let target: RequestTarget
        do throws(GatewayError) {
            let authority: String?
            (target, authority) = try RequestTarget.parse(requestLine: head.uri)
            let fields = try head.checkFields()
            // HTTP/1.1's parser reads nothing after an upgrade request: answered, then closed.
            if fields.endsConnection { current.closeAfterResponse = true }
            current.authority = authority ?? fields.host
        } catch {
            current.route = .invalidTarget
            refuse(error, closing: head.method == .CONNECT || head.headers.contains(name: "upgrade"))
            return
        }
        current.api = BackendAPI(path: target.path)
        guard head.hasPlainFraming else {
            refuse(GatewayError(status: 400, code: .invalidRequest, message: "the only transfer coding accepted is chunked"), closing: true)
            return
        }
        let route = GatewayRoute.classify(method: head.method, path: target.path)
        // A token check without a body is counted as the pass-through it is.
        current.route = route == .tokenCheck && !current.hasBody ? .proxy : route
        responder.respond(to: current, route: route, target: target, on: self)
    }

    private func body(_ part: ByteBuffer) {
        guard let current = request, !current.bodyEnded else { return }
        switch current.body {
        case .discard, .done:
            return
        case .forward(let trip):
            trip.send(part)
            if !trip.wantsBody {
                // Pause first (see ``tripBody(_:)``): the flush may make the backend writable again.
                pauseReading()
                trip.flush()
            }
        case .collect(let flow):
            do throws(GatewayError) {
                try flow.receive(part)
            } catch {
                current.body = .discard
                refuse(error, closing: true)
            }
        }
    }

    private func endOfBody() {
        guard let current = request else { return }
        current.bodyEnded = true
        let body = current.body
        current.body = .done
        switch body {
        case .forward(let trip): trip.end()
        case .collect(let flow): if let context { flow.bodyComplete(on: context.eventLoop) }
        case .discard, .done: finishIfComplete()
        }
    }

    // MARK: what a responder does with the request

    /// The connection's event loop (a responder's callbacks come back to it).
    var eventLoop: any EventLoop { context!.eventLoop }

    /// The client's address, for `X-Forwarded-For`.
    var peer: SocketAddress? { context?.channel.remoteAddress }

    /// An admitted token exchange: its body is collected by `flow`, and `100 Continue` sent to a
    /// client waiting for it.
    func collect(for flow: ExchangeFlow) {
        guard let current = request else { return }
        current.exchange = flow
        current.body = .collect(flow)
        continueIfExpected()
    }

    /// The request `flow` belongs to, while it is still the one being answered and no answer has
    /// begun; `nil` once it was refused, timed out or its client went away.
    func answering(_ flow: ExchangeFlow) -> InFlightRequest? {
        guard let current = request, current.exchange === flow, !current.responseStarted, context != nil else { return nil }
        return current
    }

    /// Sends the request to the backend and relays its answer (``UpstreamTripDelegate``).
    /// - Parameter body: the whole body, or `nil` to stream the client's body as it arrives.
    func startTrip(_ head: HTTPRequestHead, body: ByteBuffer?) {
        guard let current = request, context != nil else { return }
        let trip = UpstreamTrip(client: core.upstream, pool: pool, head: head, body: body, delegate: self, logger: core.logger)
        current.trip = trip
        if current.span != nil { current.tripStarted = DispatchTime.now().uptimeNanoseconds }
        if !current.bodyEnded { current.body = body == nil ? .forward(trip) : .discard }
        continueIfExpected()
        trip.start(flushingLater: readBatchOpen)
    }

    // MARK: the backend's answer (UpstreamTripDelegate)

    func tripResponded(_ head: HTTPResponseHead) {
        guard let current = request, let context else { return }
        var headers = ProxyHeaders.clientResponse(head.headers, requestID: current.requestID)
        // An HTTP/1.0 client cannot take a chunked body: an answer of unknown length ends with the connection.
        if current.head.predatesHTTP11 && !headers.contains(name: "content-length") { current.closeAfterResponse = true }
        if current.closeAfterResponse { headers.replaceOrAdd(name: "Connection", value: "close") }
        current.responseStarted = true
        current.status = Int(head.status.code)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: current.head.answerVersion, status: head.status, headers: headers))), promise: nil)
    }

    func tripBody(_ part: ByteBuffer) {
        guard let context else { return }
        context.write(wrapOutboundOut(.body(.byteBuffer(part))), promise: nil)
        if !context.channel.isWritable {
            // Pause first: the flush may drain the buffer at once, and the writability change it
            // reports then is what resumes the backend's reads.
            request?.trip?.pauseResponse()
            context.flush()
        }
    }

    func tripFlush() {
        context?.flush()
    }

    func tripFinished() {
        request?.trip = nil
        tripSpan(failure: nil)
        // A backend may answer before it has read the whole body: the rest of it is dropped, and
        // the request is complete once it has arrived (``endOfBody()``).
        if let current = request, !current.bodyEnded { current.body = .discard }
        endResponse()
    }

    func tripFailed(_ failure: UpstreamFailure, responseStarted: Bool) {
        request?.trip = nil
        tripSpan(failure: failure)
        let error = failure.gatewayError
        guard responseStarted else {
            refuse(error, closing: request.map { !$0.bodyEnded } ?? false)
            return
        }
        // Part of the answer is out: the client can only learn of the failure by the close.
        // The client's own slowness is still counted under its code, as a refusal counts an
        // answered failure (the trip counts the backend's failures).
        if failure.kind == .clientTimeout { core.metrics.error(code: error.code.rawValue) }
        closeConnection()
    }

    /// The trip's stage span (`upstream`), from the request sent to the answer's end or the failure.
    private func tripSpan(failure: UpstreamFailure?) {
        guard let span = request?.recordingSpan, let current = request else { return }
        let end = DispatchTime.now().uptimeNanoseconds
        if let failure {
            span.stage("upstream", from: current.tripStarted, to: end, attributes: [("samlgate.upstream_failure", failure.kind.rawValue)])
        } else {
            span.stage("upstream", from: current.tripStarted, to: end, attributes: [], integers: [("http.response.status_code", current.status)])
        }
    }

    func tripWantsBody() {
        resumeReading()
    }

    func tripWake(at deadline: NIODeadline) {
        if deadline < timerAt { arm(at: deadline) }
    }

    // MARK: answering

    /// Sends `100 Continue` to a client waiting for it, once its body is wanted.
    private func continueIfExpected() {
        guard request?.expectsContinue == true, let context else { return }
        request?.expectsContinue = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
    }

    /// Refuses the request in flight (``GatewayError/response(requestID:api:exchange:accept:core:)``
    /// renders, counts and logs it); its trip, if any, is dropped.
    /// - Parameter closing: close after the answer (a body the gateway will not read follows).
    func refuse(_ error: GatewayError, closing: Bool = false, extraHeaders: [(String, String)] = []) {
        guard let current = request else { return }
        if let span = current.recordingSpan { span.setAttribute("samlgate.reason", error.code.rawValue) }
        current.reason = error.code.rawValue
        // Only a refusal of a target that could not be parsed reads the raw one.
        let api = current.api ?? BackendAPI(path: RequestTarget.pathPart(of: current.head.uri))
        var response = error.response(
            requestID: current.requestID, traceID: current.trace.traceID, api: api, exchange: current.isExchange,
            accept: current.head.headers.first(name: "accept"), core: core)
        response.headers.insert(contentsOf: extraHeaders, at: 0)
        if closing || current.expectsContinue && !current.bodyEnded { current.closeAfterResponse = true }
        current.trip?.cancel()
        current.trip = nil
        if !current.bodyEnded { current.body = .discard }
        answer(response)
    }

    /// A whole answer of the gateway's own.
    func answer(_ response: GatewayResponse) {
        guard let current = request, !current.responseStarted else { return }
        current.responseStarted = true
        current.status = response.status
        writeHeadAndBody(
            response, requestID: current.requestID, version: current.head.answerVersion, withBody: current.head.method != .HEAD,
            closing: current.closeAfterResponse)
        endResponse()
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

    private func endResponse() {
        guard let current = request, let context else { return }
        current.responseEnded = true
        if current.closeAfterResponse || inputClosed {
            record(current)
            request = nil
            endAndClose()
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // Reads may have been paused for the backend; the rest of the body is dropped at full
        // speed. (Paused for pipelined requests instead: those are taken up first. And paused
        // while the client leaves its answers unread: see the type's documentation.)
        if !context.channel.isWritable {
            pauseReading()
        } else if queued.isEmpty {
            resumeReading()
        }
        finishIfComplete()
    }

    /// Once the answer is written and the body read: the request is done, and the next one
    /// that waited behind it is taken up.
    private func finishIfComplete() {
        guard let current = request, current.responseEnded, current.bodyEnded else { return }
        record(current)
        request = nil
        if !queued.isEmpty { takeUpQueued() }
    }

    /// A span name's method: HTTP's own, or `_OTHER` for one the client made up (OpenTelemetry's
    /// convention), so span names stay a bounded set.
    static func spanMethod(_ method: HTTPMethod) -> String {
        if case .RAW = method { return "_OTHER" }
        return method.rawValue
    }

    /// The request's metrics and log line, and an exchange's audit line.
    private func record(_ current: InFlightRequest) {
        core.metrics.request(route: current.routeLabel, status: current.status)
        if current.isExchange, let audit = core.audit { audit.write(current.auditRecord()) }
        let now = DispatchTime.now().uptimeNanoseconds
        current.span?.end(name: Self.spanMethod(current.head.method) + " " + current.routeLabel, status: current.status, at: now)
        guard current.route?.isOperational != true else { return }
        let elapsed = now - current.started
        core.metrics.stage("total", nanos: elapsed)
        core.logger.info(
            "request",
            metadata: [
                "request_id": .string(current.requestID), "trace_id": .string(current.trace.traceID), "route": .string(current.routeLabel),
                "method": .string(current.head.method.rawValue),
                "status": .stringConvertible(current.status), "duration_us": .stringConvertible(elapsed / 1000),
            ])
    }

    // MARK: connection events

    func channelReadComplete(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        deadlines.noteRead(at: now)
        if !deliveredInBatch && request == nil && !closing, let deadline = deadlines.headStarted(at: now), deadline < timerAt {
            arm(at: deadline)
        }
        deliveredInBatch = false
        readBatchOpen = false
        request?.trip?.flush()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if reads.admits() { context.read() }
    }

    private func pauseReading() {
        reads.pause()
    }

    private func resumeReading() {
        if reads.open(), let context { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if let trip = request?.trip {
                trip.resumeResponse()
            } else if !closing {
                // The client took its answers: what waited behind them goes on.
                if queued.isEmpty { resumeReading() } else { takeUpQueued() }
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            if queued.isEmpty { clientInputClosed() } else { queued.append(.inputClosed) }
            return
        }
        if event is ChannelShouldQuiesceEvent {
            // Shutting down: idle connections close now, a request in flight is answered
            // (`Connection: close`) and the connection closed; pipelined ones are dropped.
            queued.removeAll()
            if let current = request, !current.responseEnded {
                current.closeAfterResponse = true
            } else {
                // Idle, or answered with the rest of a body still coming: not waited for.
                closeConnection()
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Nothing more will come: close now when idle, else once the answer is written. A
    /// connection already closing is left to finish writing its last answer (``endAndClose()``
    /// bounds that): a client may half-close after its request and still read the answer.
    private func clientInputClosed() {
        inputClosed = true
        if request == nil && !closing { closeConnection() }
    }

    // MARK: timeouts

    private func arm(at deadline: NIODeadline) {
        guard let context else { return }
        timer?.cancel()
        timerAt = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.timerFired()
        }
    }

    /// The connection's one timer, due at ``nextWake``: the client's clocks and the backend
    /// trip's (``UpstreamTrip/wakeAt``), so no request costs a timer of its own.
    private var nextWake: NIODeadline {
        min(deadlines.nextCheck, request?.trip?.wakeAt ?? .distantFuture)
    }

    private func timerFired() {
        timer = nil
        timerAt = .distantFuture
        let now = NIODeadline.now()
        guard !closing else {
            // Its last answer still unwritten: the client stopped reading (see ``endAndClose()``).
            if let closeBy {
                if now >= closeBy { context?.close(promise: nil) } else { arm(at: closeBy) }
            }
            return
        }
        if let trip = request?.trip, trip.wakeAt <= now {
            // A trip that fails here is answered (or its connection closed) before the client's clocks are read.
            trip.wake(now: now)
            guard !closing else { return }
        }
        switch deadlines.expired(at: now) {
        case .header:
            headerTimedOut()
        case .idle:
            if let current = request, current.bodyEnded {
                // A client silent while its answer is being prepared is waiting, not idle.
                deadlines.noteRead(at: now)
                arm(at: nextWake)
            } else if request != nil {
                clientBodyFailed()
            } else {
                closeConnection()
            }
        case nil:
            arm(at: nextWake)
        }
    }

    /// A head begun but not complete within `header-timeout`: `408 header_timeout`, closed.
    /// There is no request line, so the backend's current API speaks for it.
    private func headerTimedOut() {
        guard context != nil else { return }
        closing = true
        let error = GatewayError(status: 408, code: .headerTimeout, message: "the request head did not arrive whole within header-timeout")
        let requestID = RequestID.make(incoming: nil, fresh: &requestIDs)
        let response = error.response(requestID: requestID, traceID: nil, api: .v2, exchange: false, accept: nil, core: core)
        core.metrics.request(route: GatewayRoute.headerTimeoutLabel, status: response.status)
        writeHeadAndBody(response, requestID: requestID, version: .http1_1, withBody: true, closing: true)
        endAndClose()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !closing else { return }
        guard let parserError = error as? HTTPParserError else {
            request?.trip?.cancel()
            closeConnection()
            return
        }
        if let current = request, current.bodyEnded || !queued.isEmpty {
            // It belongs to a pipelined request: answered in its turn.
            queued.append(.parserError(parserError))
            return
        }
        parserFailed(parserError, context: context)
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
        closing = true
        let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
        let headers = HTTPHeaders([("Connection", "close"), ("Content-Length", "0")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        endAndClose()
    }

    /// Ends the last answer and closes the connection once it is written — or after
    /// `idle-timeout`, when the client has not taken it by then (``closeBy``).
    private func endAndClose() {
        guard let context else { return }
        closing = true
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        let deadline = NIODeadline.now() + deadlines.idle
        closeBy = deadline
        if deadline < timerAt { arm(at: deadline) }
    }

    private func closeConnection() {
        closing = true
        context?.close(promise: nil)
    }

    /// The client's body broke off (a malformed chunk, a stall past the idle timeout, a close):
    /// the client's fault, `400 malformed_request`; the backend's connection is dropped.
    private func clientBodyFailed() {
        guard let current = request else { return }
        current.trip?.cancel()
        current.trip = nil
        current.body = .discard
        current.closeAfterResponse = true
        if current.responseStarted {
            core.metrics.error(code: GatewayError.unreadableBody.code.rawValue)
            record(current)
            request = nil
            closeConnection()
        } else {
            refuse(.unreadableBody, closing: true)
        }
    }

    /// Also reached from inside a write to a connection the client has closed: the request is
    /// recorded here once, and the code that was writing finds no request left.
    func channelInactive(context: ChannelHandlerContext) {
        if let current = request {
            request = nil
            current.trip?.cancel()
            if !current.responseStarted && !current.bodyEnded {
                // Gone mid-body before any answer: counted like a broken body.
                core.metrics.error(code: GatewayError.unreadableBody.code.rawValue)
                current.status = 400
                current.reason = GatewayError.unreadableBody.code.rawValue
            }
            record(current)
        }
        context.fireChannelInactive()
    }
}
