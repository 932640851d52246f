import Gateway
import Logging
import OTel
import ServerSupport

/// The gateway's tracing as `samlgate serve` configures it: swift-otel's tracer, asked only for
/// the requests the gateway's own sampler picked at `tracing-sample-ratio` (``TraceSampler``:
/// neither a client's sampled flag nor its choice of trace ids decides), so it records every
/// span it is asked for; exporting in batches over OTLP/HTTP (protobuf) to `tracing-endpoint`
/// under `tracing-service-name`.
///
/// swift-otel reads the standard `OTEL_*` environment variables over these settings
/// (`OTEL_EXPORTER_OTLP_TRACES_HEADERS` for a collector's credentials,
/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json`, `OTEL_BSP_SCHEDULE_DELAY`, …). Its own
/// problems (a collector that cannot be reached) are logged through the gateway's logger at
/// `warning` and above; they never fail a request.
package enum OTLPTracing {
    /// `nil` when `tracing-endpoint` is not set: tracing off.
    package static func backend(for configuration: GatewayConfiguration, logger: Logger) throws(ConfigurationError) -> TracingBackend? {
        guard let endpoint = configuration.tracingEndpoint else { return nil }
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.tracingServiceName
        otel.diagnosticLogger = .custom(logger)
        otel.diagnosticLogLevel = .warning
        otel.propagators = [.traceContext]
        otel.metrics.enabled = false
        otel.logs.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.endpoint = endpoint
        // A collector that is down holds the last flush at shutdown for at most this long
        // (swift-otel's defaults, 10 s a request and 30 s an export, would outlast a
        // Kubernetes pod's default grace period once the requests have drained).
        otel.traces.otlpExporter.timeout = .seconds(3)
        otel.traces.batchSpanProcessor.exportTimeout = .seconds(5)
        guard (0...1).contains(configuration.tracingSampleRatio) else {
            throw ConfigurationError("tracing-sample-ratio must be a ratio in 0...1")
        }
        otel.traces.sampler = .alwaysOn
        do {
            let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
            return TracingBackend(tracing: OTelRequestTracing(tracer: tracer), service: service)
        } catch {
            throw ConfigurationError("tracing: \(error)")
        }
    }
}
