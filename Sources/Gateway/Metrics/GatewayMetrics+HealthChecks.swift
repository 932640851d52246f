import Prometheus

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
