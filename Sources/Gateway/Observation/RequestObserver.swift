import Dispatch
import Logging
import NIOHTTP1
import SAMLEncoding
import ServerSupport

/// Everything the request path reports, in one place: the span a request starts with, each
/// step's fact (admission, throttling, the partner status, verification, the replay record, the
/// backend's answer or failure — ``note(_:for:)``), each refusal or failure
/// (`samlgate_errors_total`, the `refused` log line), and — once per request, as it ends —
/// `samlgate_requests_total`, the total latency, the access log line, an exchange's audit line
/// and the end of its span. The request path decides and renders; only this touches metrics,
/// spans and the logger for what a request did.
///
/// A value over the core, copied to whoever reports (the connection, its exchange, its trip).
struct RequestObserver {
    let core: GatewayCore

    // MARK: - a request begins

    /// The request for `head`: its id (the client's `X-Request-Id` when usable), its trace —
    /// continued or started — and, when tracing is on and the sampler records it, its span.
    /// The plain operational endpoints are never traced.
    func begin(_ head: HTTPRequestHead, ids: inout RequestIdentities) -> InFlightRequest {
        let started = DispatchTime.now().uptimeNanoseconds
        let trace: TraceContext, span: (any RequestSpan)?
        if let tracing = core.tracing, !GatewayRoute.isPlainOperational(uri: head.uri) {
            (trace, span) = TraceContext.traced(head.headers, tracing: tracing, sampler: core.traceSampler, ids: &ids.traces, at: started)
        } else {
            (trace, span) = (TraceContext.make(head.headers, ids: &ids.traces), nil)
        }
        return InFlightRequest(
            head: head, requestID: RequestID.make(incoming: head.headers.first(name: "x-request-id"), fresh: &ids.requests),
            trace: trace, span: span, started: started)
    }

    // MARK: - refusals

    /// The answer refusing `request` with `error`, rendered (``GatewayError/response(requestID:api:exchange:accept:configuration:)``),
    /// counted, logged, and noted on the request and its span.
    func refused(_ error: GatewayError, request: InFlightRequest) -> GatewayResponse {
        if let span = request.span { span.setAttribute("samlgate.reason", error.code.rawValue) }
        request.record.reason = error.code.rawValue
        core.metrics.error(code: error.code.rawValue)
        // Only a refusal of a target that could not be parsed reads the raw one.
        let api = request.api ?? BackendAPI(path: RequestTarget.pathPart(of: request.head.uri))
        let (response, backendCode) = error.response(
            requestID: request.requestID, api: api, exchange: request.isExchange, accept: request.head.headers.first(name: "accept"),
            configuration: core.configuration)
        logRefusal(error, requestID: request.requestID, traceID: request.trace.traceID, status: response.status, backendCode: backendCode)
        return response
    }

    /// A head that did not arrive whole within `header-timeout`: `408 header_timeout`, counted
    /// and logged at once (there is no request to end). There is no request line, so the
    /// backend's current API speaks for it. Returns the answer and its request id.
    func headerTimedOut(ids: inout RequestIdentities) -> (GatewayResponse, requestID: String) {
        let error = GatewayError(status: 408, code: .headerTimeout, message: "the request head did not arrive whole within header-timeout")
        let requestID = RequestID.make(incoming: nil, fresh: &ids.requests)
        let (response, backendCode) = error.response(requestID: requestID, api: .v2, exchange: false, accept: nil, configuration: core.configuration)
        logRefusal(error, requestID: requestID, traceID: nil, status: response.status, backendCode: backendCode)
        core.metrics.error(code: error.code.rawValue)
        core.metrics.request(route: GatewayRoute.headerTimeoutLabel, status: response.status)
        return (response, requestID)
    }

    /// A request that failed with no refusal to answer (its answer had begun, or its client left
    /// mid-body): counted under `code`. `status` and `reason`, when given, are what its request
    /// line and audit line report.
    func failed(_ code: ErrorCode, request: InFlightRequest?, status: Int? = nil, reason: Bool = false) {
        core.metrics.error(code: code.rawValue)
        if let status { request?.record.status = status }
        if reason { request?.record.reason = code.rawValue }
    }

    /// A state machine refused an event (``StateFault``: a bug of the gateway's, met in a release
    /// build): counted by machine, and logged with the event and the request's id, nothing of its
    /// content.
    func stateFault(_ fault: StateFault, request: InFlightRequest?) {
        core.metrics.connections.stateError(fault.machine)
        var metadata: Logger.Metadata = ["code": "state_error", "machine": .string(fault.machine.rawValue), "event": .string(fault.event)]
        if let request { metadata["request_id"] = .string(request.requestID) }
        core.logger.error("state error", metadata: metadata)
    }

    private func logRefusal(_ error: GatewayError, requestID: String, traceID: String?, status: Int, backendCode: BackendErrorCode) {
        // Made inside the log call (an autoclosure): nothing is built when `notice` is filtered out.
        core.logger.notice(
            "refused", metadata: Self.refusedMetadata(error, requestID: requestID, traceID: traceID, status: status, backendCode: backendCode))
    }

    private static func refusedMetadata(
        _ error: GatewayError, requestID: String, traceID: String?, status: Int, backendCode: BackendErrorCode
    ) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "request_id": .string(requestID), "code": .string(error.code.rawValue), "status": .stringConvertible(status),
            "backend_code": .string(backendCode.rawValue), "raised_at": .stringConvertible(error.location),
        ]
        if let traceID { metadata["trace_id"] = .string(traceID) }
        return metadata
    }

    // MARK: - the backend's part

    /// The request's answer begins with `status` (the backend's, or the gateway's own).
    func answering(_ request: InFlightRequest, status: Int) {
        request.record.status = status
    }

    /// The trip to the backend begins: the start of its `upstream` stage (kept for a traced request only).
    func tripStarted(_ request: InFlightRequest) {
        if request.span != nil { request.record.tripStarted = DispatchTime.now().uptimeNanoseconds }
    }

    /// The trip's stage span (`upstream`), from the request sent to the answer's end or the failure.
    func tripEnded(_ request: InFlightRequest, failure: UpstreamFailure?) {
        guard let span = request.span else { return }
        let end = DispatchTime.now().uptimeNanoseconds
        if let failure {
            span.stage("upstream", from: request.record.tripStarted, to: end, attributes: [("samlgate.upstream_failure", failure.kind.rawValue)])
        } else {
            span.stage(
                "upstream", from: request.record.tripStarted, to: end, attributes: [],
                integers: [("http.response.status_code", request.record.status)])
        }
    }

    // MARK: - a request ends

    /// The request ended (answered, or broken off): counted, logged, audited, its span ended.
    /// Called once per request.
    func finished(_ request: InFlightRequest) {
        core.metrics.request(route: request.routeLabel, status: request.record.status)
        if request.isExchange, let audit = core.audit { audit.write(auditRecord(of: request)) }
        let now = DispatchTime.now().uptimeNanoseconds
        if let span = request.span {
            // The protocol of a recorded request (OpenTelemetry's network and TLS conventions).
            span.setAttribute("network.protocol.version", request.head.version.major == 2 ? "2" : "1.1")
            if let tls = request.tls { span.setAttribute("tls.protocol.version", tls.version) }
            span.end(name: Self.spanMethod(request.head.method) + " " + request.routeLabel, status: request.record.status, at: now)
        }
        guard request.route?.isOperational != true else { return }
        let elapsed = now - request.started
        core.metrics.stage("total", nanos: elapsed)
        core.logger.info(
            "request",
            metadata: [
                "request_id": .string(request.requestID), "trace_id": .string(request.trace.traceID), "route": .string(request.routeLabel),
                "method": .string(request.head.method.rawValue),
                "status": .stringConvertible(request.record.status), "duration_us": .stringConvertible(elapsed / 1000),
            ])
    }

    /// A span name's method: HTTP's own, or `_OTHER` for one the client made up (OpenTelemetry's
    /// convention), so span names stay a bounded set.
    static func spanMethod(_ method: HTTPMethod) -> String {
        if case .RAW = method { return "_OTHER" }
        return method.rawValue
    }

    /// The audit line of an exchange, as it ends: forwarded when sent to the backend and not
    /// refused by the gateway since (an upstream failure answers with its own code).
    private func auditRecord(of request: InFlightRequest) -> AuditRecord {
        let (seconds, nanoseconds) = AuditRecord.now()
        return AuditRecord(
            seconds: seconds, nanoseconds: nanoseconds, requestID: request.requestID, traceID: request.trace.traceID, route: request.routeLabel,
            mvpd: request.record.mvpd ?? GatewayMetrics.unknownMVPD, forwarded: request.record.forwarded && request.record.reason == nil,
            status: request.record.status,
            reason: request.record.reason, wouldRefuse: request.record.wouldRefuse, assertion: request.record.assertionHash,
            subject: request.record.subjectHMAC,
            clientCertificate: request.tls?.certificate?.subject)
    }
}

/// The id sequences of one HTTP/1.1 connection or HTTP/2 stream: the requests' and the traces'.
struct RequestIdentities {
    var requests: RequestIDSequence
    var traces: TraceIDSequence

    /// Seeded from the system's random source (two system calls: once per connection).
    init() {
        requests = RequestIDSequence()
        traces = TraceIDSequence()
    }

    /// Seeded from `parent`, an HTTP/2 connection's: no system call per stream.
    init(seededBy parent: inout TraceIDSequence) {
        requests = RequestIDSequence(prefix: parent.next())
        traces = TraceIDSequence(seededBy: &parent)
    }
}
