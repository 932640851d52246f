import Dispatch
import Gateway
import Logging
import OTel
import ServerSupport
import Tracing

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

// MARK: - Requests traced through a Tracer

/// ``RequestTracing`` through swift-distributed-tracing's `Tracer` (swift-otel's in `serve`):
/// the client's accepted `traceparent` and `tracestate` are extracted as the parent, the
/// gateway's server span started at the head's arrival, and its ids read back by injecting its
/// context, so the backend is told exactly the span that is exported. The span takes the
/// parent's trace state, and its stages take the span's (swift-otel's tracer gives a child its
/// parent's), so every span of the request carries the client's `tracestate`.
final class OTelRequestTracing<T: Tracer>: RequestTracing {
    private let tracer: T

    init(tracer: T) {
        self.tracer = tracer
    }

    func startRequest(parent: String?, state: String?, at uptime: UInt64) -> any RequestSpan {
        // The data plane measures in `DispatchTime` (monotonic); spans are in wall-clock time.
        // One offset per request: a clock step moves no span of it against another.
        let offset = DefaultTracerClock.now.nanosecondsSinceEpoch &- DispatchTime.now().uptimeNanoseconds
        var context = ServiceContext.topLevel
        if let parent { extract(parent, state: state, into: &context) }
        let span = tracer.startSpan("samlgate", context: context, ofKind: .server, at: EpochInstant(nanosecondsSinceEpoch: uptime &+ offset))
        var injected: [String: String] = [:]
        tracer.inject(span.context, into: &injected, using: TraceHeaders())
        return OTelRequestSpan(
            tracer: tracer, span: span, epochOffset: offset, traceparent: injected["traceparent"],
            parentTraceID: parent.map { String($0.dropFirst(3).prefix(32)) })
    }

    /// The client's trace into `context`. swift-otel reads `traceparent` and `tracestate`
    /// together and drops both (logging a warning with the headers) when either is malformed:
    /// a `tracestate` the gateway forwards but that reader would refuse
    /// (``TraceHeaders/isWellFormedState(_:)``) is left out, so the client's trace is still
    /// continued, only without its state on the spans.
    private func extract(_ parent: String, state: String?, into context: inout ServiceContext) {
        guard let state, TraceHeaders.isWellFormedState(state) else {
            tracer.extract(["traceparent": parent], into: &context, using: TraceHeaders())
            return
        }
        tracer.extract(["traceparent": parent, "tracestate": state], into: &context, using: TraceHeaders())
        // Read back: a span context extracted injects a `traceparent`. Should the tracer refuse
        // what the grammar accepts, the parent alone.
        var probe: [String: String] = [:]
        tracer.inject(context, into: &probe, using: TraceHeaders())
        if probe["traceparent"] == nil {
            tracer.extract(["traceparent": parent], into: &context, using: TraceHeaders())
        }
    }
}

// MARK: - The carrier

/// The carrier the tracer extracts the client's accepted `traceparent` (and `tracestate`) from
/// and injects the gateway's span into: a dictionary, not the request's headers, because the
/// gateway decides which `traceparent` counts (`TraceContext`) and writes the upstream's itself.
struct TraceHeaders: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }

    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }

    /// Whether `state` is a `tracestate` both W3C Trace Context's grammar and swift-otel's reader
    /// accept: at most 32 list members `key=value`, separated by `,` and optional spaces. A key is
    /// 1 to 256 of `a-z`, digits, `_-*/@`, starting with a letter or a digit; a value 1 to 256
    /// printable ASCII characters but `,` and `=`, not ending in a space. swift-otel's reader also
    /// wants no empty list member, at most one `@` in a key and at most 14 characters after it.
    ///
    /// The gateway forwards any printable `tracestate` of at most 512 bytes; swift-otel's tracer
    /// drops the whole parent for one its reader refuses.
    static func isWellFormedState(_ state: String) -> Bool {
        let members = state.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard members.count <= 32 else { return false }
        for (index, member) in members.enumerated() {
            // Spaces after a comma are optional whitespace; none before the first member.
            let trimmed = index == 0 ? member[...] : member.drop(while: { $0 == UInt8(ascii: " ") })
            guard let equals = trimmed.firstIndex(of: UInt8(ascii: "=")),
                isKey(trimmed[..<equals]), isValue(trimmed[trimmed.index(after: equals)...])
            else { return false }
        }
        return true
    }

    private static func isKey(_ key: Substring.UTF8View) -> Bool {
        guard (1...256).contains(key.count), isLowerAlpha(key.first) || isDigit(key.first),
            key.allSatisfy({ isKeyCharacter($0) || $0 == UInt8(ascii: "@") })
        else { return false }
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else { return true }
        let system = key[key.index(after: at)...]
        return key.distance(from: key.startIndex, to: at) <= 241 && (1...14).contains(system.count) && !system.contains(UInt8(ascii: "@"))
    }

    private static func isValue(_ value: Substring.UTF8View) -> Bool {
        // Spaces before the next comma are optional whitespace, not the value's.
        var end = value.endIndex
        while end > value.startIndex, value[value.index(before: end)] == UInt8(ascii: " ") { end = value.index(before: end) }
        let trimmed = value[..<end]
        return (1...256).contains(trimmed.count)
            && trimmed.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }

    private static func isKeyCharacter(_ byte: UInt8) -> Bool {
        isLowerAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "*")
            || byte == UInt8(ascii: "/")
    }

    private static func isLowerAlpha(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ?? false
    }

    private static func isDigit(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false
    }
}
