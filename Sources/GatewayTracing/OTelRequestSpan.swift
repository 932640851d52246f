import Gateway
import Tracing

/// The gateway's span of one request (``RequestSpan``), with the ids its `traceparent` gave.
final class OTelRequestSpan<T: Tracer>: RequestSpan {
    private let tracer: T
    private let span: T.Span
    /// Wall-clock nanoseconds minus `DispatchTime` nanoseconds, taken when the span started.
    private let epochOffset: UInt64
    let traceID: String
    let spanID: UInt64
    let flags: String
    let isRecording: Bool

    /// - Parameters:
    ///   - traceparent: what the tracer injects for `span`. A tracer that injects nothing usable
    ///     (not swift-otel's) leaves random ids, unsampled, so the backend is still told a
    ///     well-formed parent.
    ///   - parentTraceID: the trace id of the client's `traceparent` the span was started under, if any.
    init(tracer: T, span: T.Span, epochOffset: UInt64, traceparent: String?, parentTraceID: String?) {
        self.tracer = tracer
        self.span = span
        self.epochOffset = epochOffset
        let fields = traceparent?.split(separator: "-", omittingEmptySubsequences: false) ?? []
        if fields.count == 4, fields[1].utf8.count == 32, fields[3].utf8.count == 2, let id = UInt64(fields[2], radix: 16),
            let injected = UInt8(fields[3], radix: 16)
        {
            let trace = String(fields[1])
            (traceID, spanID) = (trace, id)
            // swift-otel writes the sampled flag only. A trace the span started has a trace id
            // drawn whole from the system's generator (swift-otel's default `OTelRandomIDGenerator`,
            // the one `OTLPTracing` configures): W3C Level 2's `random` flag is set. A continued
            // trace keeps the client's, which the gateway's `TraceContext` applies.
            let started = parentTraceID != trace
            flags = "0" + String(injected & 0x01 | (started ? 0x02 : 0), radix: 16)
        } else {
            traceID =
                String(UInt64.random(in: 1...UInt64.max), radix: 16).leftPadded + String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded
            // Ids drawn whole from the system's generator, a trace of the gateway's: random, unsampled.
            (spanID, flags) = (UInt64.random(in: 1...UInt64.max), "02")
        }
        isRecording = span.isRecording
    }

    private func instant(_ uptime: UInt64) -> EpochInstant {
        EpochInstant(nanosecondsSinceEpoch: uptime &+ epochOffset)
    }

    /// The child span starts in `span`'s context: it inherits its trace id and its trace state.
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)], integers: [(String, Int)]) {
        let child = tracer.startSpan(name, context: span.context, ofKind: .internal, at: instant(start))
        for (key, value) in attributes { child.attributes[key] = value }
        for (key, value) in integers { child.attributes[key] = value }
        child.end(at: instant(end))
    }

    func setAttribute(_ key: String, _ value: String) {
        span.attributes[key] = value
    }

    func end(name: String, status: Int, at uptime: UInt64) {
        span.operationName = name
        if isRecording {
            if status > 0 { span.attributes["http.response.status_code"] = status }
            // A server span fails on a 5xx only; a 4xx is the client's (OpenTelemetry's HTTP conventions).
            if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        }
        span.end(at: instant(uptime))
    }
}

extension String {
    /// 16 hex digits: a `UInt64` in hex padded with zeros.
    fileprivate var leftPadded: String { String(repeating: "0", count: max(0, 16 - utf8.count)) + self }
}

// MARK: - Wall-clock instants

/// A point in wall-clock time, for a span started or ended at a time the data plane measured
/// earlier (an exchange's stages are recorded once they are over).
struct EpochInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64

    static func < (lhs: EpochInstant, rhs: EpochInstant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }
}
