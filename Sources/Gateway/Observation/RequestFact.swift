import Dispatch
import Logging
import SAMLVerification

/// What a step of a request found, as the step found it: the exchange (``ExchangeFlow``) and
/// the responder say what happened, the ``RequestObserver`` alone turns it into metrics, span
/// stages, log lines and the request's audit record.
enum RequestFact {
    /// The exchange's head passed admission (``ExchangeAdmission``): its `admission` stage.
    case admitted
    /// Refused by its client's throttle (`samlgate_throttled_total{route}`).
    case throttled
    /// The body waited for a worker from `queued` to `began`, and was verified by `ended`.
    case verified(ExchangeVerdict, queued: UInt64, began: UInt64, ended: UInt64)
    /// Verified and encoded: the response's figures, and the audit line's digests (a later
    /// refusal, a replay, an upstream failure keeps them).
    case prepared(PreparedExchange)
    /// Report-only: enforcing would have refused with this, and the exchange is forwarded.
    case wouldRefuse(GatewayError, mvpd: String)
    /// An out-of-turn metadata fetch, asked at `asked`, answered.
    case refetched(MetadataRefreshResult, asked: UInt64)
    /// The shared replay store, asked at `asked`, answered: recorded (`nil`) or a refusal.
    case replayAnswered(refusal: GatewayError?, asked: UInt64)
    /// The exchange's one outcome, for the trust store's MVPD when known.
    case exchangeDecided(mvpd: String?, forwarded: Bool, refusal: GatewayError?)
    /// The exchange's state refused an event (a bug of the gateway's; a release build goes on safely).
    case stateFault(StateFault)
}

extension RequestObserver {
    /// Reports what a step of `request` found (``RequestFact``).
    func note(_ fact: RequestFact, for request: InFlightRequest) {
        switch fact {
        case .admitted:
            guard let span = request.span else { return }
            span.stage("admission", from: request.started, to: DispatchTime.now().uptimeNanoseconds, attributes: [])
        case .throttled:
            core.metrics.throttled(route: request.routeLabel)
        case .verified(let verdict, let queued, let began, let ended):
            core.metrics.stage("queue", nanos: began - queued)
            guard let span = request.span else { return }
            span.stage("worker_wait", from: queued, to: began, attributes: [])
            span.stage("verification", from: began, to: ended, attributes: [("samlgate.verdict", verdict.spanLabel)])
        case .prepared(let prepared):
            core.metrics.exchange(prepared)
            request.record.assertionHash = prepared.assertionHash
            request.record.subjectHMAC = prepared.subjectHMAC
        case .wouldRefuse(let error, let mvpd):
            wouldRefuse(error, mvpd: mvpd, request: request)
        case .refetched(let result, let asked):
            guard let span = request.span else { return }
            span.stage("metadata_refetch", from: asked, to: DispatchTime.now().uptimeNanoseconds, attributes: [("samlgate.refetch", result.rawValue)])
        case .replayAnswered(let refusal, let asked):
            guard let span = request.span else { return }
            span.stage(
                "replay_record", from: asked, to: DispatchTime.now().uptimeNanoseconds,
                attributes: [("samlgate.replay", refusal?.code.rawValue ?? "recorded")])
        case .exchangeDecided(let mvpd, let forwarded, let refusal):
            if let refusal, refusal.isVerificationFailure { core.metrics.verificationFailure(code: refusal.code.rawValue, mvpd: mvpd) }
            core.metrics.exchangeOutcome(mvpd: mvpd, forwarded: forwarded)
            request.record.mvpd = mvpd
            request.record.forwarded = forwarded
            guard let span = request.span else { return }
            span.setAttribute("samlgate.mvpd", mvpd ?? GatewayMetrics.unknownMVPD)
            span.setAttribute("samlgate.outcome", forwarded ? "forwarded" : "refused")
        case .stateFault(let fault):
            stateFault(fault, request: request)
        }
    }

    /// Report-only (the gateway's `mode`, or the MVPD's `mode` file): what enforcing would have
    /// refused is reported — `samlgate_report_only_total{mvpd,reason}`, the `would_refuse` log
    /// line, the span — so the dashboard shows what enforcing would change.
    private func wouldRefuse(_ error: GatewayError, mvpd: String, request: InFlightRequest) {
        if error.isVerificationFailure { core.metrics.verificationFailure(code: error.code.rawValue, mvpd: mvpd) }
        core.metrics.reportOnly(mvpd: mvpd, reason: error.code.rawValue)
        core.logger.notice(
            "would_refuse",
            metadata: [
                "request_id": .string(request.requestID), "trace_id": .string(request.trace.traceID), "mvpd": .string(mvpd),
                "code": .string(error.code.rawValue), "raised_at": .stringConvertible(error.location),
            ])
        if let span = request.span { span.setAttribute("samlgate.would_refuse", error.code.rawValue) }
        request.record.wouldRefuse = error.code.rawValue
    }

    /// `samlgate_partner_status_total{route,verdict}`: how a partner status header read.
    func partnerStatus(route: GatewayRoute, verdict: String) {
        core.metrics.partnerStatus(route: route.label, verdict: verdict)
    }

    /// Header names the backend was not given (``ProxyHeaders``).
    func headerNamesDropped(_ count: Int) {
        core.metrics.headerNamesDropped(count)
    }

    // MARK: - the backends

    /// A backend's answer head arrived `nanos` after the trip began.
    func upstreamAnswered(endpoint: UpstreamEndpoint, nanos: UInt64) {
        core.metrics.upstreamLatency(endpoint: endpoint.baseURL, nanos: nanos)
    }

    /// A trip's failure that is the backend's (``UpstreamFailure/Kind/isUpstreams``), on its
    /// `attempt`-th try: counted per endpoint and logged (no request data in the line).
    func upstreamFailed(_ failure: UpstreamFailure, endpoint: UpstreamEndpoint, attempt: Int) {
        core.metrics.upstreamError(endpoint: endpoint.baseURL, kind: failure.kind)
        core.logger.warning(
            "upstream request failed",
            metadata: [
                "upstream": .string(endpoint.baseURL), "failure": .string(failure.kind.rawValue), "attempt": .stringConvertible(attempt),
            ])
    }
}

extension ExchangeVerdict {
    /// `samlgate.verdict` on the verification stage span.
    fileprivate var spanLabel: String {
        switch self {
        case .forward: "verified"
        case .report: "would_refuse"
        case .refuse: "refused"
        }
    }
}
