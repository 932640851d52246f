import Dispatch
import Gateway
import Tracing

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
