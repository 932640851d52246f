import Dispatch
import Gateway
import Tracing

/// ``RequestTracing`` through swift-distributed-tracing's `Tracer` (swift-otel's in `serve`):
/// the client's accepted `traceparent` is extracted as the parent, the gateway's server span
/// started at the head's arrival, and its ids read back by injecting its context, so the
/// backend is told exactly the span that is exported.
final class OTelRequestTracing<T: Tracer>: RequestTracing {
    private let tracer: T

    init(tracer: T) {
        self.tracer = tracer
    }

    func startRequest(parent: String?, at uptime: UInt64) -> any RequestSpan {
        // The data plane measures in `DispatchTime` (monotonic); spans are in wall-clock time.
        // One offset per request: a clock step moves no span of it against another.
        let offset = DefaultTracerClock.now.nanosecondsSinceEpoch &- DispatchTime.now().uptimeNanoseconds
        var context = ServiceContext.topLevel
        if let parent { tracer.extract(["traceparent": parent], into: &context, using: TraceHeaders()) }
        let span = tracer.startSpan("samlgate", context: context, ofKind: .server, at: EpochInstant(nanosecondsSinceEpoch: uptime &+ offset))
        var injected: [String: String] = [:]
        tracer.inject(span.context, into: &injected, using: TraceHeaders())
        return OTelRequestSpan(tracer: tracer, span: span, epochOffset: offset, traceparent: injected["traceparent"])
    }
}
