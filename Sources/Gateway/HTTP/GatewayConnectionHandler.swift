import Dispatch
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SAMLVerification
import ServerSupport

/// One client connection of the data plane: routes each request, answers the local ones, streams
/// pass-through requests to a backend and their answers back (``UpstreamTrip``), and buffers only
/// token-exchange bodies, which the workers verify and encode before the trip.
///
/// Everything here runs on the connection's event loop, and so does the upstream connection of
/// its trip: no locks, no hops between threads, except the exchange's one round trip to a worker.
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

    /// What happens to the body of the request in flight.
    private enum Body {
        /// The answer does not depend on it: read and dropped.
        case discard
        /// Streamed to the backend.
        case forward(UpstreamTrip)
        /// A token exchange, collected for the workers.
        case collect(ByteBuffer, ExchangeStart)
        /// Complete (or given up); a worker or the backend is answering.
        case done
    }

    /// What the exchange needs once its body is complete.
    private struct ExchangeStart {
        let route: ExchangeRoute
        let store: TrustStore
        let target: RequestTarget
    }

    /// The request being answered. A class: it is read and updated on every event of the
    /// request, and a struct this size would be copied (its references retained and released)
    /// each time.
    private final class InFlight {
        let head: HTTPRequestHead
        let requestID: String
        let started: UInt64
        var route: GatewayRoute = .proxy
        var body: Body = .discard
        var bodyEnded = false
        var responseStarted = false
        var responseEnded = false
        var status = 0
        /// Close once the answer is written (no keep-alive, or an unread body left behind).
        var closeAfterResponse: Bool
        var trip: UpstreamTrip?
        /// The client's `Expect: 100-continue` not yet answered.
        var expectsContinue: Bool
        /// The absolute-form target's authority, else `Host`: what `X-Forwarded-Host` reports.
        var authority: String?
        /// The backend API the request is for, from its canonical path (the one routed on): the
        /// vocabulary of its refusals. `nil` for a target that could not be parsed.
        var api: BackendAPI?

        init(head: HTTPRequestHead, requestID: String, expectsContinue: Bool) {
            self.head = head
            self.requestID = requestID
            started = DispatchTime.now().uptimeNanoseconds
            closeAfterResponse = !head.isKeepAlive
            self.expectsContinue = expectsContinue
        }
    }

    /// What arrived for later: parts of pipelined requests, and what followed them.
    private enum Queued {
        case part(HTTPServerRequestPart)
        case parserError(HTTPParserError)
        case inputClosed
    }

    private let core: GatewayCore
    private let pool: UpstreamConnectionPool
    private var context: ChannelHandlerContext?
    private var request: InFlight?
    /// Counts requests, so that a worker's answer for a request given up on is recognised.
    private var generation = 0
    private var requestIDs = RequestIDSequence()
    private var reads = ReadGate()
    /// The client half-closed: no request follows the one in flight.
    private var inputClosed = false
    /// The connection is being closed: later errors and events are the close's echo.
    private var closing = false
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
        take(part, context: context)
    }

    private func take(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head): begin(head, context: context)
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
        takingUpQueued = true
        defer { takingUpQueued = false }
        while !closing, request.map({ !$0.bodyEnded }) ?? true, let next = queued.first {
            if request == nil, case .part(.head) = next, !context.channel.isWritable { return }
            queued.removeFirst()
            switch next {
            case .part(let part): take(part, context: context)
            case .parserError(let error): parserFailed(error, context: context)
            case .inputClosed: clientInputClosed()
            }
        }
        if queued.isEmpty && !closing { resumeReading() }
    }

    private func begin(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        generation &+= 1
        deadlines.headComplete()
        let requestID = RequestID.make(incoming: head.headers.first(name: "x-request-id"), fresh: &requestIDs)
        let expectsContinue = !Self.predates11(head.version) && head.headers["expect"].contains { $0.lowercased() == "100-continue" }
        request = InFlight(head: head, requestID: requestID, expectsContinue: expectsContinue)
        let target: RequestTarget
        let authority: String?
        do throws(GatewayError) {
            // Parsed once: routed on, and forwarded, in this one spelling (see ``RequestTarget``).
            (target, authority) = try RequestTarget.parse(requestLine: head.uri)
            if head.headers["host"].count > 1 {
                throw GatewayError(
                    status: 400, code: .duplicateHeader, message: "the header Host is given more than once",
                    details: [("header", .string("Host"))])
            }
        } catch {
            request?.route = .invalidTarget
            refuse(error)
            return
        }
        request?.authority = authority ?? head.headers.first(name: "host")
        request?.api = BackendAPI(path: target.path)
        if !Self.hasPlainFraming(head) {
            request?.route = .invalidRequest
            refuse(
                GatewayError(status: 400, code: .invalidRequest, message: "the only transfer coding accepted is chunked"),
                closing: true)
            return
        }
        let route = GatewayRoute.classify(method: head.method, path: target.path)
        // A token check without a body is counted as the pass-through it is.
        if route != .tokenCheck { request?.route = route }
        switch route {
        case .healthz:
            answer(status: 200, json: "{\"status\":\"up\"}")
        case .readyz:
            readiness()
        case .metrics:
            let bytes = core.metrics.exposition(queueDepth: core.pool.queueDepth)
            answer(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: ByteBuffer(bytes: bytes))
        case .exchangeV1:
            admitExchange(head, target: target, partner: false)
        case .exchangeV2:
            admitExchange(head, target: target, partner: true)
        case .exchangeMethodNotAllowed(let allow):
            refuse(.methodNotAllowed(head.method.rawValue), extraHeaders: [("Allow", allow)])
        case .tokenCheck:
            if Self.hasBody(head) {
                request?.route = .tokenCheck
                refuse(GatewayError(status: 400, code: .invalidRequest, message: "a token check carries no body"))
            } else {
                proxy(head, target: target)
            }
        case .partnerStatus:
            if let refusal = ExchangeAdmission.connectionRefusal(head.headers, needed: [PartnerStatusHeader.name]) {
                refuse(refusal, closing: Self.hasBody(head))
                return
            }
            ExchangeAdmission.readPartnerStatus(head.headers, route: route, metrics: core.metrics)
            proxy(head, target: target)
        case .proxy:
            if head.method == .TRACE && Self.hasBody(head) {
                refuse(GatewayError(status: 400, code: .invalidRequest, message: "a TRACE request carries no body"))
            } else {
                proxy(head, target: target)
            }
        case .invalidTarget:
            refuse(
                GatewayError(
                    status: 400, code: .invalidRequestTarget,
                    message: "invalid request target: a look-alike of a token-exchange path, or more segments after one"),
                closing: Self.hasBody(head))
        case .invalidRequest, .headerTimeout:
            // Names of refusals made before routing; classification never yields them.
            assertionFailure("classify returned \(route)")
            refuse(GatewayError(status: 400, code: .invalidRequest, message: "the request could not be routed"), closing: true)
        }
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
        case .collect(var collected, let start):
            let limit = core.configuration.bodyLimit
            guard collected.readableBytes + part.readableBytes <= limit else {
                current.body = .discard
                refuse(.bodyTooLarge(limit), closing: true)
                return
            }
            current.body = .done  // no second reference to `collected` while it grows
            if collected.readableBytes == 0 {
                collected = part
            } else {
                var part = part
                collected.writeBuffer(&part)
            }
            request?.body = .collect(collected, start)
        }
    }

    private func endOfBody() {
        guard let current = request else { return }
        current.bodyEnded = true
        let body = current.body
        current.body = .done
        switch body {
        case .forward(let trip): trip.end()
        case .collect(let collected, let start): prepareExchange(collected, start)
        case .discard, .done: finishIfComplete()
        }
    }

    // MARK: pass-through

    private func proxy(_ head: HTTPRequestHead, target: RequestTarget) {
        guard context != nil, let current = request else { return }
        var headers = upstreamHeaders(current)
        let hasBody = Self.hasBody(head)
        if let length = head.headers.first(name: "content-length") {
            headers.add(name: "Content-Length", value: length)
        } else if hasBody {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        let trip = UpstreamTrip(
            client: core.upstream, pool: pool,
            head: HTTPRequestHead(version: .http1_1, method: head.method, uri: target.forwarded, headers: headers),
            body: hasBody ? nil : ByteBuffer(), delegate: self, logger: core.logger)
        request?.trip = trip
        request?.body = hasBody ? .forward(trip) : .discard
        continueIfExpected()
        trip.start(flushingLater: readBatchOpen)
    }

    /// The client's headers as the backend gets them (``ProxyHeaders``), on every route; names
    /// with `_` (unless `allow-underscore-headers`) or another character than letters, digits and
    /// `-` dropped, and counted.
    private func upstreamHeaders(_ current: InFlight) -> HTTPHeaders {
        var dropped = 0
        let headers = ProxyHeaders.upstreamRequest(
            current.head.headers, authority: current.authority, peer: context?.channel.remoteAddress, trusting: core.trustedProxies,
            requestID: current.requestID, allowingUnderscores: core.configuration.allowUnderscoreHeaders, droppedNames: &dropped)
        if dropped > 0 { core.metrics.headerNamesDropped(dropped) }
        return headers
    }

    /// HTTP/1.0 (or older): no chunked bodies, no interim answers, no keep-alive unless asked.
    private static func predates11(_ version: HTTPVersion) -> Bool {
        version.major < 1 || (version.major == 1 && version.minor == 0)
    }

    /// No transfer coding but `chunked`: the gateway forwards bodies chunked or by length, and a
    /// coding it dropped on the way (`gzip, chunked`) would reach the backend unannounced.
    private static func hasPlainFraming(_ head: HTTPRequestHead) -> Bool {
        let codings = head.headers["transfer-encoding"]
        return codings.isEmpty || (codings.count == 1 && codings[0].trimmingCharacters(in: .whitespaces).lowercased() == "chunked")
    }

    /// Whether the request announces a body (a chunked one, or a `Content-Length` above 0).
    private static func hasBody(_ head: HTTPRequestHead) -> Bool {
        head.headers.contains(name: "transfer-encoding") || (head.headers.first(name: "content-length").flatMap(Int.init) ?? 0) > 0
    }

    // MARK: token exchange

    private func admitExchange(_ head: HTTPRequestHead, target: RequestTarget, partner: Bool) {
        do throws(GatewayError) {
            try ExchangeAdmission.check(head.headers, target: target, partner: partner)
            // One trust snapshot for the whole request, so a reload cannot split it.
            let store = core.trustStore.current
            let route =
                partner ? try ExchangeAdmission.partnerRoute(head.headers, target: target, store: store, metrics: core.metrics) : .v1
            let limit = core.configuration.bodyLimit
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > limit {
                throw GatewayError.bodyTooLarge(limit)
            }
            request?.body = .collect(ByteBuffer(), ExchangeStart(route: route, store: store, target: target))
            continueIfExpected()
        } catch {
            refuse(error, closing: Self.hasBody(head))
        }
    }

    private func prepareExchange(_ body: ByteBuffer, _ start: ExchangeStart) {
        guard let context else { return }
        let queued = DispatchTime.now().uptimeNanoseconds
        let processor = core.processor
        let eventLoop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        let generation = self.generation
        let refused = core.pool.enqueue {
            let outcome = processor.prepare(body: body, route: start.route, store: start.store)
            eventLoop.execute { handler.value.exchangePrepared(outcome, start: start, queued: queued, generation: generation) }
        }
        if let refused { refuse(.overloaded(shuttingDown: refused == .stopped)) }
    }

    private func exchangePrepared(_ outcome: Result<PreparedExchange, GatewayError>, start: ExchangeStart, queued: UInt64, generation: Int) {
        guard generation == self.generation, let current = request, !current.responseStarted, let context else { return }
        switch outcome {
        case .failure(let error):
            if error.isVerificationFailure { core.metrics.verificationFailure(code: error.code.rawValue) }
            refuse(error)
        case .success(let prepared):
            core.metrics.exchange(prepared)
            core.metrics.stage(
                "queue",
                nanos: DispatchTime.now().uptimeNanoseconds - queued
                    - prepared.parseNanos - prepared.verifyNanos - prepared.encodeNanos)
            guard let shared = core.sharedReplayStore, let claim = prepared.replayClaim else {
                forwardExchange(prepared, start: start)
                return
            }
            // The shared replay store, asked from this loop: forwarded only once recorded.
            shared.admit(claim, on: context.eventLoop).assumeIsolated().whenSuccess { refusal in
                guard generation == self.generation, let current = self.request, !current.responseStarted else { return }
                if let refusal {
                    if refusal.isVerificationFailure { self.core.metrics.verificationFailure(code: refusal.code.rawValue) }
                    self.refuse(refusal)
                } else {
                    self.forwardExchange(prepared, start: start)
                }
            }
        }
    }

    private func forwardExchange(_ prepared: PreparedExchange, start: ExchangeStart) {
        guard let current = request, context != nil else { return }
        var headers = upstreamHeaders(current)
        // The body is the gateway's own: plain form encoding, whatever parameters the client's
        // type carried (a charset the backend would decode with differently).
        headers.replaceOrAdd(name: "Content-Type", value: ExchangeAdmission.formType)
        headers.add(name: "Content-Length", value: String(prepared.upstreamBody.readableBytes))
        let trip = UpstreamTrip(
            client: core.upstream, pool: pool,
            head: HTTPRequestHead(version: .http1_1, method: .POST, uri: start.target.path, headers: headers),
            body: prepared.upstreamBody, delegate: self, logger: core.logger)
        request?.trip = trip
        trip.start()
    }

    // MARK: the backend's answer (UpstreamTripDelegate)

    func tripResponded(_ head: HTTPResponseHead) {
        guard let current = request, let context else { return }
        var headers = ProxyHeaders.clientResponse(head.headers, requestID: current.requestID)
        // An HTTP/1.0 client cannot take a chunked body: an answer of unknown length ends with the connection.
        if Self.predates11(current.head.version) && !headers.contains(name: "content-length") { current.closeAfterResponse = true }
        if current.closeAfterResponse { headers.replaceOrAdd(name: "Connection", value: "close") }
        current.responseStarted = true
        current.status = Int(head.status.code)
        let version = Self.predates11(current.head.version) ? current.head.version : .http1_1
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: head.status, headers: headers))), promise: nil)
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
        // A backend may answer before it has read the whole body: the rest of it is dropped, and
        // the request is complete once it has arrived (``endOfBody()``).
        if let current = request, !current.bodyEnded { current.body = .discard }
        endResponse()
    }

    func tripFailed(_ failure: UpstreamFailure, responseStarted: Bool) {
        request?.trip = nil
        let error = failure.gatewayError
        guard responseStarted else {
            refuse(error, closing: request.map { !$0.bodyEnded } ?? false)
            return
        }
        // Part of the answer is out: the client can only learn of the failure by the close.
        // The client's own slowness is still counted under its code, as ``refuse(_:closing:extraHeaders:)``
        // counts an answered failure (the trip counts the backend's failures).
        if failure.kind == .clientTimeout { core.metrics.error(code: error.code.rawValue) }
        closeConnection()
    }

    func tripWantsBody() {
        resumeReading()
    }

    // MARK: answering

    /// Sends `100 Continue` to a client waiting for it, once its body is wanted.
    private func continueIfExpected() {
        guard request?.expectsContinue == true, let context else { return }
        request?.expectsContinue = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
    }

    /// A refusal in the backend's enhanced error shape and vocabulary, counted and logged under
    /// samlgate's own reason.
    /// - Parameter closing: close after the answer (a body the gateway will not read follows).
    private func refuse(_ error: GatewayError, closing: Bool = false, extraHeaders: [(String, String)] = []) {
        guard let current = request else { return }
        // Only a refusal of a target that could not be parsed reads the raw one.
        let api = current.api ?? BackendAPI(path: RequestTarget.pathPart(of: current.head.uri))
        let exchange = current.route == .exchangeV1 || current.route == .exchangeV2
        let (status, enhanced) = error.answer(api: api, exchange: exchange, showReason: core.configuration.errorDetails == .reason)
        core.metrics.error(code: error.code.rawValue)
        core.logger.notice(
            "refused",
            metadata: [
                "request_id": .string(current.requestID), "code": .string(error.code.rawValue), "status": .stringConvertible(status),
                "backend_code": .string(enhanced.code.rawValue), "raised_at": .stringConvertible(error.location),
            ])
        var headers = extraHeaders
        if let retryAfter = error.retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if closing || current.expectsContinue && !current.bodyEnded { request?.closeAfterResponse = true }
        request?.trip?.cancel()
        request?.trip = nil
        if !current.bodyEnded { request?.body = .discard }
        let format = ErrorFormat(api: api, accept: current.head.headers.first(name: "accept"))
        let body = enhanced.render(format, trace: current.requestID, helpURL: core.configuration.helpURL)
        answer(status: status, contentType: format.contentType, body: ByteBuffer(string: body), extraHeaders: headers)
    }

    private func readiness() {
        let store = core.trustStore.current
        let mvpds = store.providers.count, mvpdsReady = store.readyCount()
        let healthy = core.upstream.healthyCount
        let ready = mvpdsReady > 0 && healthy > 0
        var body = JSONLine()
        body.add("status", ready ? "ready" : "not_ready")
        body.add("mvpds", mvpds)
        body.add("mvpdsReady", mvpdsReady)
        body.add("upstreamsHealthy", healthy)
        body.add("upstreams", core.upstream.endpoints.count)
        // Reported, not required: with Redis down every replica would leave the load balancer at
        // once, pass-through traffic with it (the failure policy answers the exchanges).
        if let context, let shared = core.sharedReplayStore {
            body.add("replayStore", shared.readiness(probingOn: context.eventLoop))
        } else {
            body.add("replayStore", "memory")
        }
        answer(status: ready ? 200 : 503, json: body.json)
    }

    private func answer(status: Int, json: String, extraHeaders: [(String, String)] = []) {
        answer(status: status, contentType: "application/json", body: ByteBuffer(string: json), extraHeaders: extraHeaders)
    }

    /// A whole answer of the gateway's own.
    private func answer(status: Int, contentType: String, body: ByteBuffer, extraHeaders: [(String, String)] = []) {
        guard let current = request, !current.responseStarted, let context else { return }
        var headers = HTTPHeaders()
        headers.reserveCapacity(4 + extraHeaders.count)
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "X-Request-Id", value: current.requestID)
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if current.closeAfterResponse { headers.add(name: "Connection", value: "close") }
        current.responseStarted = true
        current.status = status
        let version = Self.predates11(current.head.version) ? current.head.version : .http1_1
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status), headers: headers))),
            promise: nil)
        if current.head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        endResponse()
    }

    private func endResponse() {
        guard let current = request, let context else { return }
        current.responseEnded = true
        if current.closeAfterResponse || inputClosed {
            closing = true
            record(current)
            request = nil
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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

    /// The request's metrics and log line.
    private func record(_ current: InFlight) {
        core.metrics.request(route: current.route.label, status: current.status)
        guard !current.route.isOperational else { return }
        let elapsed = DispatchTime.now().uptimeNanoseconds - current.started
        core.metrics.stage("total", nanos: elapsed)
        core.logger.info(
            "request",
            metadata: [
                "request_id": .string(current.requestID), "route": .string(current.route.label), "method": .string(current.head.method.rawValue),
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

    /// Nothing more will come: close now when idle, else once the answer is written.
    private func clientInputClosed() {
        inputClosed = true
        if request == nil { closeConnection() }
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

    private func timerFired() {
        timer = nil
        timerAt = .distantFuture
        guard !closing else { return }
        let now = NIODeadline.now()
        switch deadlines.expired(at: now) {
        case .header:
            headerTimedOut()
        case .idle:
            if let current = request, current.bodyEnded {
                // A client silent while its answer is being prepared is waiting, not idle.
                deadlines.noteRead(at: now)
                arm(at: deadlines.nextCheck)
            } else if request != nil {
                clientBodyFailed()
            } else {
                closeConnection()
            }
        case nil:
            arm(at: deadlines.nextCheck)
        }
    }

    /// A head begun but not complete within `header-timeout`: `408 header_timeout`, closed.
    private func headerTimedOut() {
        guard let context else { return }
        closing = true
        let error = GatewayError(status: 408, code: .headerTimeout, message: "the request head did not arrive whole within header-timeout")
        let requestID = RequestID.make(incoming: nil, fresh: &requestIDs)
        core.metrics.error(code: error.code.rawValue)
        core.metrics.request(route: GatewayRoute.headerTimeout.label, status: error.status)
        // No request line: the backend's current API speaks for it.
        let enhanced = error.answer(api: .v2, exchange: false, showReason: core.configuration.errorDetails == .reason).body
        core.logger.notice(
            "refused",
            metadata: [
                "request_id": .string(requestID), "code": .string(error.code.rawValue), "status": .stringConvertible(error.status),
                "backend_code": .string(enhanced.code.rawValue),
            ])
        let body = ByteBuffer(string: enhanced.json(trace: requestID, helpURL: core.configuration.helpURL))
        let headers = HTTPHeaders([
            ("Content-Type", ErrorFormat.json.contentType), ("Content-Length", String(body.readableBytes)),
            ("X-Request-Id", requestID), ("Connection", "close"),
        ])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .requestTimeout, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
        // plain refusal, written before the decoder closes the connection.
        closing = true
        let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
        let headers = HTTPHeaders([("Connection", "close"), ("Content-Length", "0")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
            }
            record(current)
        }
        context.fireChannelInactive()
    }
}
