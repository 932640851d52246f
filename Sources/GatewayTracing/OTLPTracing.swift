import Foundation
import Gateway
import Logging
import ServerSupport

/// The gateway's tracing as `samlgate serve` configures it: the requests the gateway's own
/// sampler picks at `tracing-sample-ratio` (``TraceSampler``: neither a client's sampled flag nor
/// its choice of trace ids decides) are recorded as plain values on their event loop
/// (``SpanRecorder``) and exported in batches over OTLP/HTTP (protobuf) to `tracing-endpoint`
/// under `tracing-service-name` (``OTLPSpanExporter``).
package enum OTLPTracing {
    /// `nil` when `tracing-endpoint` is not set: tracing off.
    /// - Parameter environment: the process's; the standard `OTEL_*` variables it reads are
    ///   listed at ``OTLPExportSettings/init(configuration:environment:)``.
    package static func backend(
        for configuration: GatewayConfiguration, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> TracingBackend? {
        guard configuration.tracingEndpoint != nil else { return nil }
        guard (0...1).contains(configuration.tracingSampleRatio) else {
            throw ConfigurationError("tracing-sample-ratio must be a ratio in 0...1")
        }
        let settings = try OTLPExportSettings(configuration: configuration, environment: environment)
        let queue = SpanQueue(capacity: settings.queueCapacity, batchSize: settings.batchSize)
        return TracingBackend(tracing: SpanRecorder(queue: queue), service: OTLPSpanExporter(settings: settings, queue: queue, logger: logger))
    }
}
