import Prometheus

/// What the client connections report below the requests: the protocol each speaks once set
/// up, the TLS handshakes and their failures, the served certificate's expiry and reloads, and
/// the HTTP/2 connections closed for an error or a flood, and the streams reset alone.
///
/// Counted once per connection (a handshake, a protocol chosen), never per request: the handles
/// are kept (``MetricHandles``) and their series made at start-up where the label values are
/// known, TLS's only when TLS is on (``prepareTLS()``).
package final class ConnectionMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let protocols: MetricHandles<String, Prometheus.Counter>
    private let handshakes: MetricHandles<GatewayMetrics.Pair, Prometheus.Counter>
    private let handshakeFailures: MetricHandles<String, Prometheus.Counter>
    private let reloads: MetricHandles<String, Prometheus.Counter>
    private let upstreamReloads: MetricHandles<String, Prometheus.Counter>
    private let http2Errors: MetricHandles<String, Prometheus.Counter>
    private let http2StreamErrors: MetricHandles<String, Prometheus.Counter>
    private let stateErrors: MetricHandles<String, Prometheus.Counter>

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        protocols = MetricHandles { name in registry.counter(.clientConnections, [("protocol", name)]) }
        handshakes = MetricHandles { key in registry.counter(.tlsHandshakes, [("version", key.first), ("alpn", key.second)]) }
        handshakeFailures = MetricHandles { reason in registry.counter(.tlsHandshakeFailures, [("reason", reason)]) }
        reloads = MetricHandles { result in registry.counter(.tlsReloads, [("result", result)]) }
        upstreamReloads = MetricHandles { result in registry.counter(.upstreamTLSReloads, [("result", result)]) }
        http2Errors = MetricHandles { reason in registry.counter(.http2ConnectionErrors, [("reason", reason)]) }
        http2StreamErrors = MetricHandles { reason in registry.counter(.http2StreamErrors, [("reason", reason)]) }
        stateErrors = MetricHandles { machine in registry.counter(.stateErrors, [("machine", machine)]) }
        protocols.prepare(KnownLabelValues.connectionProtocols)
        http2Errors.prepare(KnownLabelValues.http2ConnectionErrors)
        http2StreamErrors.prepare(KnownLabelValues.http2StreamErrors)
        stateErrors.prepare(StateFault.Machine.allCases.map(\.rawValue))
    }

    /// The TLS series at 0, when the listener serves TLS.
    func prepareTLS() {
        handshakes.prepare(
            ["tls1.2", "tls1.3"].flatMap { version in ["h2", "http/1.1", "none"].map { GatewayMetrics.Pair(version, $0) } })
        handshakeFailures.prepare(KnownLabelValues.handshakeFailures)
        reloads.prepare(KnownLabelValues.reloadResults)
    }

    /// A connection set up to speak `name` (`http1.1`, `h2`, `h2c`).
    func opened(protocol name: String) {
        protocols[name].increment()
    }

    /// A TLS handshake completed: `version` as `tls1.2`/`tls1.3`, `alpn` the protocol chosen
    /// (`h2`, `http/1.1`, or `none` when the client offered none).
    func handshake(version: String, alpn: String) {
        handshakes[GatewayMetrics.Pair(version, alpn)].increment()
    }

    func handshakeFailed(_ reason: TLSHandshakeFailure) {
        handshakeFailures[reason.rawValue].increment()
    }

    /// A reload of the TLS files: `ok` or `failed` (the previous pair kept).
    func tlsReloaded(succeeded: Bool) {
        reloads[succeeded ? "ok" : "failed"].increment()
    }

    /// The upstream TLS series at 0, when the upstreams' TLS reads files.
    func prepareUpstreamTLS() {
        upstreamReloads.prepare(KnownLabelValues.reloadResults)
    }

    /// A reload of the upstreams' TLS files: `ok` or `failed` (the previous ones kept).
    func upstreamTLSReloaded(succeeded: Bool) {
        upstreamReloads[succeeded ? "ok" : "failed"].increment()
    }

    /// The served certificate's notAfter, Unix seconds: an alert compares it with `time()`.
    func servedCertificate(notAfter: Double) {
        registry.gauge(.tlsCertificateNotAfter).set(to: notAfter.rounded())
    }

    func http2ConnectionClosed(_ reason: HTTP2ConnectionError) {
        http2Errors[reason.rawValue].increment()
    }

    func http2StreamReset(_ reason: HTTP2StreamError) {
        http2StreamErrors[reason.rawValue].increment()
    }

    /// An event a state machine refused (``StateFault``), met in a release build.
    func stateError(_ machine: StateFault.Machine) {
        stateErrors[machine.rawValue].increment()
    }
}
