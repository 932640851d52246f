/// Which requests are recorded when tracing is on, decided before any tracer is asked: a share
/// of `tracing-sample-ratio` of the traces, whatever the client sends.
///
/// A continued trace is decided by a keyed hash of its trace id under a secret drawn at start-up
/// (SipHash, through the standard library's `Hasher`, with 128 random bits mixed in), a trace the
/// gateway starts by a random draw. A client choosing its trace ids (or its sampled flag) cannot
/// pick ids that are always recorded: deciding on the id's own bits (the OpenTelemetry
/// `TraceIdRatioBased` sampler compares them with the ratio) lets one that sends ids of small
/// value have each of its requests exported. All requests of one trace that reach this process
/// are decided alike.
package struct TraceSampler: Sendable {
    /// Recorded when the 64-bit draw is below this; `nil` for a ratio of 1 (always).
    private let threshold: UInt64?
    private let secret: (UInt64, UInt64)

    package init(ratio: Double) {
        threshold = ratio >= 1 ? nil : UInt64(max(0, ratio) * 0x1p64)
        secret = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
    }

    /// Whether a request continuing the trace `traceID` (32 hex digits) is recorded.
    package func records(continuing traceID: String) -> Bool {
        guard let threshold else { return true }
        var hasher = Hasher()
        hasher.combine(secret.0)
        hasher.combine(traceID)
        hasher.combine(secret.1)
        return UInt64(truncatingIfNeeded: hasher.finalize()) < threshold
    }

    /// Whether a request starting a trace is recorded.
    package func recordsNewTrace() -> Bool {
        var system = SystemRandomNumberGenerator()
        return recordsNewTrace(using: &system)
    }

    /// Whether a request starting a trace is recorded, drawn from `generator` (the connection's
    /// ``TraceIDSequence`` on the data plane: no system call per request).
    package func recordsNewTrace(using generator: inout some RandomNumberGenerator) -> Bool {
        guard let threshold else { return true }
        return generator.next() < threshold
    }
}
