import CoreMetrics
import Prometheus
import SAMLEncoding
import SAMLVerification

/// The gateway's metrics, through swift-metrics with a Prometheus factory owned by this gateway
/// (not the process-wide bootstrap, so several gateways — tests — never share counters).
///
/// Names (all prefixed `samlgate_`): `requests_total{route,status}`, `errors_total{code}`,
/// `exchanges_total{mvpd,outcome}` (every exchange whose SAML work ran: `forwarded` or `refused`),
/// `verification_failures_total{code,mvpd}`, `saml_forms_total{form}`,
/// `signature_preserving_forwards_total` (the original forwarded: normalization breaks the
/// signature), `equivalent_normalized_forwards_total` (normalization breaks the signature, the
/// normalized document is the same tree and is forwarded), `stage_duration_seconds{stage}` (parse, verify,
/// encode, queue, total), `worker_queue_depth`, `worker_queue_limit`, `workers`,
/// `upstreams_healthy`, `upstreams_configured`, `upstream_duration_seconds{upstream}`,
/// `upstream_errors_total{upstream,kind}`, `trust_store_reloads_total{result}`,
/// `trust_store_mvpds`, `partner_status_total{route,verdict}`, `verifications_by_key_total{mvpd,key}`
/// (which trusted key, by short fingerprint, verified each accepted response), the expiry
/// gauges of ``TrustExpiryGauges``, and with a shared replay store
/// `replay_store_up` (1 while the last command got a usable reply),
/// `replay_store_duration_seconds` (one `SET NX` round trip), `replay_store_errors_total{kind}`
/// (timeout, connect, closed, backoff, server, unavailable, unsupported, protocol, shutdown) and
/// `replay_store_unrecorded_total` (accepted unrecorded under `replay-store-failure: open`),
/// `audit_lines_total` and `audit_errors_total` (with `audit-log`: lines written, writes that failed),
/// `report_only_total{mvpd,reason}` (forwarded in report-only mode, enforcing would have refused),
/// `throttled_total{route}` (refused by the throttle), `connections_refused_total{reason}`
/// (closed at accept by a cap: `total`, `per_client`), `open_connections`,
/// `dropped_header_names_total` (request headers not forwarded for a `_` or another character
/// than letters, digits and `-` in the name), and
/// for fetched metadata `metadata_refresh_total{source,result}` (updated, not_modified, failed),
/// `metadata_refresh_failures_total{source,reason}` and
/// `metadata_last_refresh_timestamp_seconds{source}` (Unix time of the last fetch that succeeded),
/// `metadata_refetch_total{source,result}` (fetched out of turn for a key not trusted).
package final class GatewayMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let queueDepth: CoreMetrics.Gauge
    private let pointInTime: PointInTimeGauges
    private let mvpdCount: CoreMetrics.Gauge
    private let preservingForwards: CoreMetrics.Counter
    private let equivalentForwards: CoreMetrics.Counter
    private let replayStoreDuration: CoreMetrics.Timer
    private let replayStoreUnrecordedCount: CoreMetrics.Counter
    private let droppedHeaderNames: CoreMetrics.Counter
    // The per-exchange metrics, kept (see ``MetricHandles``).
    private let requests: MetricHandles<RequestKey, CoreMetrics.Counter>
    private let forms: MetricHandles<SAMLForm, CoreMetrics.Counter>
    private let stages: MetricHandles<String, CoreMetrics.Timer>
    private let upstreamDurations: MetricHandles<String, CoreMetrics.Timer>
    private let partnerStatuses: MetricHandles<PartnerStatusKey, CoreMetrics.Counter>
    private let verifyingKeys: MetricHandles<VerifyingKey, CoreMetrics.Counter>
    private let reportedOnly: MetricHandles<ReportOnlyKey, CoreMetrics.Counter>
    private let throttledRequests: MetricHandles<String, CoreMetrics.Counter>
    private let refusedConnections: MetricHandles<String, CoreMetrics.Counter>
    private let outcomes: MetricHandles<OutcomeKey, CoreMetrics.Counter>
    private let failures: MetricHandles<FailureKey, CoreMetrics.Counter>
    private let trustExpiry: TrustExpiryGauges

    struct RequestKey: Hashable, Sendable {
        let route: String
        let status: Int
    }

    struct PartnerStatusKey: Hashable, Sendable {
        let route: String
        let verdict: String
    }

    struct VerifyingKey: Hashable, Sendable {
        let mvpd: String
        let key: String
    }

    struct OutcomeKey: Hashable, Sendable {
        let mvpd: String
        let forwarded: Bool
    }

    struct ReportOnlyKey: Hashable, Sendable {
        let mvpd: String
        let reason: String
    }

    struct FailureKey: Hashable, Sendable {
        let code: String
        let mvpd: String
    }

    /// The `mvpd` label of an exchange refused before it named one of the trust store's MVPDs:
    /// the label's values stay bounded by the trust store whatever clients send.
    static let unknownMVPD = "unknown"

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        queueDepth = CoreMetrics.Gauge(label: "samlgate_worker_queue_depth", factory: factory)
        pointInTime = PointInTimeGauges(factory: factory)
        mvpdCount = CoreMetrics.Gauge(label: "samlgate_trust_store_mvpds", factory: factory)
        preservingForwards = CoreMetrics.Counter(label: "samlgate_signature_preserving_forwards_total", factory: factory)
        equivalentForwards = CoreMetrics.Counter(label: "samlgate_equivalent_normalized_forwards_total", factory: factory)
        replayStoreDuration = CoreMetrics.Timer(label: "samlgate_replay_store_duration_seconds", factory: factory)
        replayStoreUnrecordedCount = CoreMetrics.Counter(label: "samlgate_replay_store_unrecorded_total", factory: factory)
        droppedHeaderNames = CoreMetrics.Counter(label: "samlgate_dropped_header_names_total", factory: factory)
        let made = factory
        requests = MetricHandles { key in
            CoreMetrics.Counter(label: "samlgate_requests_total", dimensions: [("route", key.route), ("status", String(key.status))], factory: made)
        }
        forms = MetricHandles { form in
            CoreMetrics.Counter(label: "samlgate_saml_forms_total", dimensions: [("form", form.rawValue)], factory: made)
        }
        stages = MetricHandles { stage in
            CoreMetrics.Timer(label: "samlgate_stage_duration_seconds", dimensions: [("stage", stage)], factory: made)
        }
        partnerStatuses = MetricHandles { key in
            CoreMetrics.Counter(label: "samlgate_partner_status_total", dimensions: [("route", key.route), ("verdict", key.verdict)], factory: made)
        }
        verifyingKeys = MetricHandles { key in
            CoreMetrics.Counter(label: "samlgate_verifications_by_key_total", dimensions: [("mvpd", key.mvpd), ("key", key.key)], factory: made)
        }
        reportedOnly = MetricHandles { key in
            CoreMetrics.Counter(label: "samlgate_report_only_total", dimensions: [("mvpd", key.mvpd), ("reason", key.reason)], factory: made)
        }
        throttledRequests = MetricHandles { route in
            CoreMetrics.Counter(label: "samlgate_throttled_total", dimensions: [("route", route)], factory: made)
        }
        refusedConnections = MetricHandles { reason in
            CoreMetrics.Counter(label: "samlgate_connections_refused_total", dimensions: [("reason", reason)], factory: made)
        }
        outcomes = MetricHandles { key in
            CoreMetrics.Counter(
                label: "samlgate_exchanges_total", dimensions: [("mvpd", key.mvpd), ("outcome", key.forwarded ? "forwarded" : "refused")],
                factory: made)
        }
        failures = MetricHandles { key in
            CoreMetrics.Counter(label: "samlgate_verification_failures_total", dimensions: [("code", key.code), ("mvpd", key.mvpd)], factory: made)
        }
        trustExpiry = TrustExpiryGauges(registry: registry)
        upstreamDurations = MetricHandles { endpoint in
            CoreMetrics.Timer(label: "samlgate_upstream_duration_seconds", dimensions: [("upstream", endpoint)], factory: made)
        }
    }

    package func request(route: String, status: Int) {
        requests[RequestKey(route: route, status: status)].increment()
    }

    package func error(code: String) {
        CoreMetrics.Counter(label: "samlgate_errors_total", dimensions: [("code", code)], factory: factory).increment()
    }

    /// An `AP-Partner-Framework-Status` seen on a v2 route: `granted`, `denied`, `undetermined`,
    /// `permission_error`, `provider_error`, `expired`, `unreadable` or `absent`.
    package func partnerStatus(route: String, verdict: String) {
        partnerStatuses[PartnerStatusKey(route: route, verdict: verdict)].increment()
    }

    /// - Parameter mvpd: the trust store's MVPD the exchange was for; `nil` counts as `unknown`.
    package func verificationFailure(code: String, mvpd: String?) {
        failures[FailureKey(code: code, mvpd: mvpd ?? Self.unknownMVPD)].increment()
    }

    /// An exchange whose SAML work ran: forwarded to the backend, or refused.
    package func exchangeOutcome(mvpd: String?, forwarded: Bool) {
        outcomes[OutcomeKey(mvpd: mvpd ?? Self.unknownMVPD, forwarded: forwarded)].increment()
    }

    package func exchange(_ prepared: PreparedExchange) {
        forms[prepared.form].increment()
        verifyingKeys[VerifyingKey(mvpd: prepared.mvpd, key: prepared.keyFingerprint)].increment()
        switch prepared.normalization {
        case .original: preservingForwards.increment()
        case .equivalent: equivalentForwards.increment()
        case .unchanged, .verified: break
        }
        stage("parse", nanos: prepared.parseNanos)
        stage("verify", nanos: prepared.verifyNanos)
        stage("encode", nanos: prepared.encodeNanos)
    }

    package func stage(_ name: String, nanos: UInt64) {
        stages[name].recordNanoseconds(Int64(clamping: nanos))
    }

    package func upstreamLatency(endpoint: String, nanos: UInt64) {
        upstreamDurations[endpoint].recordNanoseconds(Int64(clamping: nanos))
    }

    package func upstreamError(endpoint: String, kind: UpstreamFailure.Kind) {
        CoreMetrics.Counter(label: "samlgate_upstream_errors_total", dimensions: [("upstream", endpoint), ("kind", kind.rawValue)], factory: factory)
            .increment()
    }

    package func replayStoreLatency(nanos: UInt64) {
        replayStoreDuration.recordNanoseconds(Int64(clamping: nanos))
    }

    package func replayStoreError(kind: String) {
        CoreMetrics.Counter(label: "samlgate_replay_store_errors_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// An out-of-turn fetch of a metadata source (``MetadataRefetch``): `updated`, `unchanged`,
    /// `failed`, or `suppressed` (within `metadata-min-refetch` of the last).
    func metadataRefetch(source: String, result: String) {
        CoreMetrics.Counter(label: "samlgate_metadata_refetch_total", dimensions: [("source", source), ("result", result)], factory: factory)
            .increment()
    }

    /// Lines of the audit trail written (``AuditLog``).
    func auditLines(_ count: Int) {
        CoreMetrics.Counter(label: "samlgate_audit_lines_total", factory: factory).increment(by: count)
    }

    /// Audit lines (or a reopen, a sync) that failed.
    func auditErrors(_ count: Int) {
        CoreMetrics.Counter(label: "samlgate_audit_errors_total", factory: factory).increment(by: count)
    }

    /// An exchange forwarded in report-only mode that enforcing would have refused for `reason`.
    package func reportOnly(mvpd: String, reason: String) {
        reportedOnly[ReportOnlyKey(mvpd: mvpd, reason: reason)].increment()
    }

    /// An exchange let through unthrottled because the shared throttle's Redis could not answer
    /// (``SharedThrottle``), by the RESP failure's kind, or `refused` when Redis refused the
    /// script itself (an ACL without it, no scripting): kept apart from the outages because it
    /// lasts until Redis's configuration changes.
    func throttleStoreUnavailable(kind: String) {
        CoreMetrics.Counter(label: "samlgate_throttle_store_unavailable_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// A request refused by the throttle (``ClientThrottle``).
    package func throttled(route: String) {
        throttledRequests[route].increment()
    }

    /// A connection closed at accept by a cap (``ConnectionCaps``).
    func connectionRefused(_ reason: ConnectionCaps.Refusal) {
        refusedConnections[reason.rawValue].increment()
    }

    /// Request headers not forwarded for their names (`_`, `.`, …; see ``ProxyHeaders``).
    package func headerNamesDropped(_ count: Int) {
        droppedHeaderNames.increment(by: count)
    }

    package func replayStoreUnrecorded() {
        replayStoreUnrecordedCount.increment()
    }

    package func trustStoreReload(succeeded: Bool, mvpds: Int) {
        CoreMetrics.Counter(label: "samlgate_trust_store_reloads_total", dimensions: [("result", succeeded ? "ok" : "failed")], factory: factory)
            .increment()
        if succeeded { mvpdCount.record(mvpds) }
    }

    /// One fetch of the metadata source `source` (an MVPD id or `aggregate`): `result` is
    /// `updated`, `not_modified` or `failed` (then `reason` says why).
    func metadataRefresh(source: String, result: String, reason: String? = nil, at time: Double) {
        CoreMetrics.Counter(label: "samlgate_metadata_refresh_total", dimensions: [("source", source), ("result", result)], factory: factory)
            .increment()
        if let reason {
            CoreMetrics.Counter(
                label: "samlgate_metadata_refresh_failures_total", dimensions: [("source", source), ("reason", reason)],
                factory: factory
            ).increment()
        } else {
            CoreMetrics.Gauge(label: "samlgate_metadata_last_refresh_timestamp_seconds", dimensions: [("source", source)], factory: factory)
                .record(time.rounded())
        }
    }

    package func setTrustStoreSize(_ mvpds: Int) {
        mvpdCount.record(mvpds)
    }

    /// The expiry gauges of a freshly loaded store (replacing the previous store's).
    package func trustStoreLoaded(_ store: TrustStore) {
        trustExpiry.replace(with: store)
    }

    /// The Prometheus text exposition, with the point-in-time gauges refreshed first.
    package func exposition(queueDepth depth: Int, state: PointInTimeGauges.State) -> [UInt8] {
        queueDepth.record(depth)
        pointInTime.record(state)
        trustExpiry.refresh()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8192)
        registry.emit(into: &bytes)
        return bytes
    }
}
