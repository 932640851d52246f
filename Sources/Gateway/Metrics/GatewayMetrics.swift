import Prometheus
import SAMLEncoding
import SAMLVerification

/// The gateway's metrics, in a Prometheus registry owned by this gateway (not a process-wide
/// one, so several gateways — tests — never share counters). Every name and its `# HELP` text
/// are ``GatewayMetric``'s; docs/gateway.md describes each metric and its labels.
///
/// A counter's series exists from start-up at 0 for every label value known in advance
/// (``KnownLabelValues``), from each trust-store load for its MVPDs, keys and metadata sources,
/// and from start-up for each configured upstream: Prometheus's `rate()` and `increase()` need a
/// sample before the first event to see it. What is known only when it happens (a response's
/// status, a source's last good fetch) appears then. The handles are kept (``MetricHandles``), so
/// a request finds its series made, at start-up or by an earlier request.
package final class GatewayMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let queueDepth: Prometheus.Gauge
    private let pointInTime: PointInTimeGauges
    private let mvpdCount: Prometheus.Gauge
    private let preservingForwards: Prometheus.Counter
    private let equivalentForwards: Prometheus.Counter
    private let replayStoreDuration: DurationHistogram
    private let replayStoreUnrecordedCount: Prometheus.Counter
    private let replayStoreFailoverCount: Prometheus.Counter
    private let replayStoreTopologyRefreshCount: Prometheus.Counter
    private let droppedHeaderNames: Prometheus.Counter
    // The labelled metrics, by their label values (see ``MetricHandles``).
    private let requests: MetricHandles<RequestKey, Prometheus.Counter>
    private let errors: MetricHandles<String, Prometheus.Counter>
    private let forms: MetricHandles<SAMLForm, Prometheus.Counter>
    private let stages: MetricHandles<String, DurationHistogram>
    private let upstreamDurations: MetricHandles<String, DurationHistogram>
    private let upstreamErrors: MetricHandles<Pair, Prometheus.Counter>
    private let partnerStatuses: MetricHandles<Pair, Prometheus.Counter>
    private let verifyingKeys: MetricHandles<Pair, Prometheus.Counter>
    private let reportedOnly: MetricHandles<Pair, Prometheus.Counter>
    private let throttledRequests: MetricHandles<String, Prometheus.Counter>
    private let refusedConnections: MetricHandles<String, Prometheus.Counter>
    private let outcomes: MetricHandles<OutcomeKey, Prometheus.Counter>
    private let failures: MetricHandles<Pair, Prometheus.Counter>
    private let replayStoreErrors: MetricHandles<String, Prometheus.Counter>
    private let replayStoreRedirects: MetricHandles<String, Prometheus.Counter>
    private let reloads: MetricHandles<String, Prometheus.Counter>
    private let metadataRefreshes: MetricHandles<Pair, Prometheus.Counter>
    private let metadataFailures: MetricHandles<Pair, Prometheus.Counter>
    private let metadataRefetches: MetricHandles<Pair, Prometheus.Counter>
    private let trustExpiry: TrustExpiryGauges
    /// The client connections' protocols, TLS handshakes and HTTP/2 connection errors.
    package let connections: ConnectionMetrics

    struct RequestKey: Hashable, Sendable {
        let route: String
        let status: Int
    }

    struct OutcomeKey: Hashable, Sendable {
        let mvpd: String
        let forwarded: Bool
    }

    /// Two label values, in the order the metric names its labels.
    struct Pair: Hashable, Sendable {
        let first: String
        let second: String

        init(_ first: String, _ second: String) {
            self.first = first
            self.second = second
        }
    }

    /// The `mvpd` label of an exchange refused before it named one of the trust store's MVPDs:
    /// the label's values stay bounded by the trust store whatever clients send.
    static let unknownMVPD = "unknown"

    package init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        queueDepth = registry.gauge(.workerQueueDepth)
        pointInTime = PointInTimeGauges(registry: registry)
        mvpdCount = registry.gauge(.trustStoreMVPDs)
        preservingForwards = registry.counter(.signaturePreservingForwards)
        equivalentForwards = registry.counter(.equivalentNormalizedForwards)
        replayStoreDuration = registry.durations(.replayStoreDuration)
        replayStoreUnrecordedCount = registry.counter(.replayStoreUnrecorded)
        replayStoreFailoverCount = registry.counter(.replayStoreFailovers)
        replayStoreTopologyRefreshCount = registry.counter(.replayStoreTopologyRefreshes)
        droppedHeaderNames = registry.counter(.droppedHeaderNames)
        requests = MetricHandles { key in registry.counter(.requests, [("route", key.route), ("status", String(key.status))]) }
        errors = MetricHandles { code in registry.counter(.errors, [("code", code)]) }
        forms = MetricHandles { form in registry.counter(.samlForms, [("form", form.rawValue)]) }
        stages = MetricHandles { stage in registry.durations(.stageDuration, [("stage", stage)]) }
        upstreamDurations = MetricHandles { endpoint in registry.durations(.upstreamDuration, [("upstream", endpoint)]) }
        upstreamErrors = MetricHandles { key in registry.counter(.upstreamErrors, [("upstream", key.first), ("kind", key.second)]) }
        partnerStatuses = MetricHandles { key in registry.counter(.partnerStatus, [("route", key.first), ("verdict", key.second)]) }
        verifyingKeys = MetricHandles { key in registry.counter(.verificationsByKey, [("mvpd", key.first), ("key", key.second)]) }
        reportedOnly = MetricHandles { key in registry.counter(.reportOnly, [("mvpd", key.first), ("reason", key.second)]) }
        throttledRequests = MetricHandles { route in registry.counter(.throttled, [("route", route)]) }
        refusedConnections = MetricHandles { reason in registry.counter(.connectionsRefused, [("reason", reason)]) }
        outcomes = MetricHandles { key in
            registry.counter(.exchanges, [("mvpd", key.mvpd), ("outcome", key.forwarded ? "forwarded" : "refused")])
        }
        failures = MetricHandles { key in registry.counter(.verificationFailures, [("code", key.first), ("mvpd", key.second)]) }
        replayStoreErrors = MetricHandles { kind in registry.counter(.replayStoreErrors, [("kind", kind)]) }
        replayStoreRedirects = MetricHandles { kind in registry.counter(.replayStoreRedirects, [("kind", kind)]) }
        reloads = MetricHandles { result in registry.counter(.trustStoreReloads, [("result", result)]) }
        metadataRefreshes = MetricHandles { key in registry.counter(.metadataRefresh, [("source", key.first), ("result", key.second)]) }
        metadataFailures = MetricHandles { key in
            registry.counter(.metadataRefreshFailures, [("source", key.first), ("reason", key.second)])
        }
        metadataRefetches = MetricHandles { key in registry.counter(.metadataRefetch, [("source", key.first), ("result", key.second)]) }
        trustExpiry = TrustExpiryGauges(registry: registry)
        connections = ConnectionMetrics(registry: registry)

        errors.prepare(KnownLabelValues.refusalCodes)
        requests.prepare(KnownLabelValues.gatewayAnsweredRequests.map { RequestKey(route: $0.route, status: $0.status) })
        forms.prepare(SAMLForm.allCases)
        stages.prepare(KnownLabelValues.stages)
        partnerStatuses.prepare(
            KnownLabelValues.partnerStatusRouteLabels.flatMap { route in KnownLabelValues.partnerStatusVerdicts.map { Pair(route, $0) } })
        throttledRequests.prepare(KnownLabelValues.throttledRoutes)
        refusedConnections.prepare(KnownLabelValues.connectionRefusals)
        replayStoreErrors.prepare(KnownLabelValues.replayStoreErrorKinds)
        replayStoreRedirects.prepare(KnownLabelValues.replayStoreRedirectKinds)
        reloads.prepare(KnownLabelValues.reloadResults)
        prepare(mvpd: Self.unknownMVPD)
    }

    /// The series of one MVPD (or `unknown`): its exchanges by outcome, the verifier's refusals by reason.
    private func prepare(mvpd: String) {
        outcomes.prepare([OutcomeKey(mvpd: mvpd, forwarded: true), OutcomeKey(mvpd: mvpd, forwarded: false)])
        failures.prepare(KnownLabelValues.verificationCodes.map { Pair($0, mvpd) })
    }

    package func request(route: String, status: Int) {
        requests[RequestKey(route: route, status: status)].increment()
    }

    package func error(code: String) {
        errors[code].increment()
    }

    /// An `AP-Partner-Framework-Status` seen on a v2 route: `granted`, `denied`, `undetermined`,
    /// `permission_error`, `provider_error`, `expired`, `unreadable` or `absent`.
    package func partnerStatus(route: String, verdict: String) {
        partnerStatuses[Pair(route, verdict)].increment()
    }

    /// - Parameter mvpd: the trust store's MVPD the exchange was for; `nil` counts as `unknown`.
    package func verificationFailure(code: String, mvpd: String?) {
        failures[Pair(code, mvpd ?? Self.unknownMVPD)].increment()
    }

    /// An exchange whose SAML work ran: forwarded to the backend, or refused.
    package func exchangeOutcome(mvpd: String?, forwarded: Bool) {
        outcomes[OutcomeKey(mvpd: mvpd ?? Self.unknownMVPD, forwarded: forwarded)].increment()
    }

    package func exchange(_ prepared: PreparedExchange) {
        forms[prepared.form].increment()
        verifyingKeys[Pair(prepared.mvpd, prepared.keyFingerprint)].increment()
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
        stages[name].record(.nanoseconds(Int64(clamping: nanos)))
    }

    package func upstreamLatency(endpoint: String, nanos: UInt64) {
        upstreamDurations[endpoint].record(.nanoseconds(Int64(clamping: nanos)))
    }

    package func upstreamError(endpoint: String, kind: UpstreamFailure.Kind) {
        upstreamErrors[Pair(endpoint, kind.rawValue)].increment()
    }

    /// The configured upstreams (their base URLs, the `upstream` label): their latency and
    /// failure series, made before the first trip.
    func upstreamsConfigured(_ endpoints: [String]) {
        upstreamDurations.prepare(endpoints)
        upstreamErrors.prepare(endpoints.flatMap { endpoint in KnownLabelValues.upstreamErrorKinds.map { Pair(endpoint, $0) } })
    }

    package func replayStoreLatency(nanos: UInt64) {
        replayStoreDuration.record(.nanoseconds(Int64(clamping: nanos)))
    }

    /// A failover followed: the Sentinels name another primary.
    package func replayStoreFailover() {
        replayStoreFailoverCount.increment()
    }

    /// A Redis Cluster node redirected a replay-store or throttle command.
    package func replayStoreRedirect(ask: Bool) {
        replayStoreRedirects[ask ? "ask" : "moved"].increment()
    }

    package func replayStoreTopologyRefresh() {
        replayStoreTopologyRefreshCount.increment()
    }

    package func replayStoreError(kind: String) {
        replayStoreErrors[kind].increment()
    }

    /// An out-of-turn fetch of a metadata source (``MetadataRefetch``): `updated`, `unchanged`,
    /// `failed`, or `suppressed` (within `metadata-min-refetch` of the last).
    func metadataRefetch(source: String, result: String) {
        metadataRefetches[Pair(source, result)].increment()
    }

    /// Lines of the audit trail written (``AuditLog``). Made by the audit log's start, so the
    /// series exists only with `audit-log`.
    func auditLines(_ count: Int) {
        registry.counter(.auditLines).increment(by: Int64(count))
    }

    /// Audit lines (or a reopen, a sync) that failed.
    func auditErrors(_ count: Int) {
        registry.counter(.auditErrors).increment(by: Int64(count))
    }

    /// An exchange forwarded in report-only mode that enforcing would have refused for `reason`.
    package func reportOnly(mvpd: String, reason: String) {
        reportedOnly[Pair(mvpd, reason)].increment()
    }

    /// An exchange let through unthrottled because the shared throttle's Redis could not answer
    /// (``SharedThrottle``), by the RESP failure's kind, or `refused` when Redis refused the
    /// script itself (an ACL without it, no scripting): kept apart from the outages because it
    /// lasts until Redis's configuration changes.
    func throttleStoreUnavailable(kind: String) {
        registry.counter(.throttleStoreUnavailable, [("kind", kind)]).increment()
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
        droppedHeaderNames.increment(by: Int64(count))
    }

    package func replayStoreUnrecorded() {
        replayStoreUnrecordedCount.increment()
    }

    package func trustStoreReload(succeeded: Bool, mvpds: Int) {
        reloads[succeeded ? "ok" : "failed"].increment()
        if succeeded { mvpdCount.set(to: Double(mvpds)) }
    }

    /// One fetch of the metadata source `source` (an MVPD id or `aggregate`): `result` is
    /// `updated`, `not_modified` or `failed` (then `reason` says why).
    func metadataRefresh(source: String, result: String, reason: String? = nil, at time: Double) {
        metadataRefreshes[Pair(source, result)].increment()
        if let reason {
            metadataFailures[Pair(source, reason)].increment()
        } else {
            // Made at the first good fetch: before it there is no time to report.
            registry.gauge(.metadataLastRefresh, [("source", source)]).set(to: time.rounded())
        }
    }

    package func setTrustStoreSize(_ mvpds: Int) {
        mvpdCount.set(to: Double(mvpds))
    }

    /// A freshly loaded store (start-up, reload): the series of its MVPDs, keys and metadata
    /// sources made at 0 (those of a store before it stay, with their counts), and its expiry
    /// gauges replacing the previous store's.
    /// - Parameter reportOnly: the MVPDs whose verdicts are reported, not enforced (`unknown`
    ///   among them when a request naming no MVPD is reported): their `report_only_total` series.
    package func trustStoreLoaded(_ store: TrustStore, reportOnly: [String]) {
        for mvpd in store.mvpds {
            prepare(mvpd: mvpd)
            guard let provider = store.provider(for: mvpd) else { continue }
            verifyingKeys.prepare(provider.keys.map { Pair(mvpd, $0.shortFingerprint) })
        }
        for mvpd in reportOnly {
            reportedOnly.prepare(KnownLabelValues.refusalCodes.map { Pair(mvpd, $0) })
        }
        for source in store.metadataSources {
            metadataRefreshes.prepare(KnownLabelValues.metadataRefreshResults.map { Pair(source.name, $0) })
            metadataFailures.prepare(KnownLabelValues.metadataFailureReasons.map { Pair(source.name, $0) })
            metadataRefetches.prepare(KnownLabelValues.metadataRefetchResults.map { Pair(source.name, $0) })
        }
        trustExpiry.replace(with: store)
    }

    /// The Prometheus text exposition, with the point-in-time gauges refreshed first.
    package func exposition(queueDepth depth: Int, state: PointInTimeGauges.State) -> [UInt8] {
        queueDepth.set(to: Double(depth))
        pointInTime.record(state)
        trustExpiry.refresh()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32768)
        registry.emit(into: &bytes)
        return bytes
    }
}

// MARK: - Active health checks

/// The metrics of one upstream's active health checks (`upstream-health-path`), made once per
/// upstream with the checker: `samlgate_upstream_health_checks_total{upstream,result}`
/// (`up`, `down`: every probe by its result) and `samlgate_upstream_probe_up{upstream}` (1 while
/// the checks keep the upstream in rotation, 0 while they hold it out).
///
/// Made on the registry itself, with help text: they exist only with the checks on, so a gateway
/// without them has no probe gauge for an alert or a dashboard to read as down.
struct UpstreamProbeMetrics: Sendable {
    let passed: Prometheus.Counter
    let failed: Prometheus.Counter
    let up: Prometheus.Gauge
}

extension GatewayMetrics {
    static var upstreamHealthChecksName: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "samlgate", metricName: "upstream_health_checks", unitName: "total",
            helpText: "Active health probes of each upstream by result (up: 2xx or 3xx within the timeout)")
    }

    static var upstreamProbeUpName: MetricNameDescriptor {
        MetricNameDescriptor(
            // A state has no unit: the empty unit adds no suffix to the name.
            namespace: "samlgate", metricName: "upstream_probe_up", unitName: "",
            helpText: "1 while the active health checks keep an upstream in rotation, 0 while they hold it out")
    }

    /// The handles of `endpoint`'s probes; both counters exist from the start (at 0), so a rate
    /// over them is defined before the first failure.
    func upstreamProbeMetrics(endpoint: String) -> UpstreamProbeMetrics {
        UpstreamProbeMetrics(
            passed: registry.makeCounter(descriptor: Self.upstreamHealthChecksName, labels: [("upstream", endpoint), ("result", "up")]),
            failed: registry.makeCounter(descriptor: Self.upstreamHealthChecksName, labels: [("upstream", endpoint), ("result", "down")]),
            up: registry.makeGauge(descriptor: Self.upstreamProbeUpName, labels: [("upstream", endpoint)]))
    }
}
