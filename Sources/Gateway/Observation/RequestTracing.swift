import ServiceLifecycle

/// Where the spans of the gateway's requests go. The Gateway module only asks for them: the
/// exporter (OTLP over HTTP, the `GatewayTracing` module) is plugged in by `samlgate serve`
/// when `tracing-endpoint` is set. Without it ``GatewayCore/tracing`` is `nil` and the data
/// plane does no span work at all.
///
/// Asked only for the requests ``TraceSampler`` records, with the ids the gateway already drew
/// (``TraceContext``): the span is the one the backend is told as its parent.
package protocol RequestTracing: Sendable {
    /// The gateway's span for one request (kind server), started at `uptime` (`DispatchTime`
    /// nanoseconds).
    /// - Parameters:
    ///   - traceID: 32 lower-case hex digits, the client's on a continued trace.
    ///   - spanID: the gateway's span id, the parent the backend is told.
    ///   - parentSpanID: the client's span on a continued trace; `nil` starts a new one.
    ///   - state: the client's `tracestate` as the gateway forwards it (continued traces only).
    func startRequest(traceID: String, spanID: UInt64, parentSpanID: UInt64?, state: String?, at uptime: UInt64) -> any RequestSpan
}

/// The gateway's span of one request, recorded: used on the connection's event loop only.
///
/// The stages of an exchange are recorded after the fact, each with the start and end the
/// data plane measured anyway: no span object crosses to a worker thread, and a request the
/// sampler left out has no span at all.
package protocol RequestSpan: AnyObject {
    /// A finished stage under this span, from `start` to `end` (`DispatchTime` nanoseconds).
    /// Attributes are typed as the OpenTelemetry semantic conventions type them: `integers` for
    /// those with a number for value (`http.response.status_code`), `attributes` for the strings.
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)], integers: [(String, Int)])

    /// An attribute of the request's span. Never SAML content, a NameID, an attribute value or a device id.
    func setAttribute(_ key: String, _ value: String)

    /// Ends the span, named after the route (`POST v1_tokens_authn`), with the status answered
    /// (`0` when the client left before any answer); a 5xx marks it failed. Called once.
    func end(name: String, status: Int, at uptime: UInt64)
}

extension RequestSpan {
    /// A finished stage with string attributes only.
    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)]) {
        stage(name, from: start, to: end, attributes: attributes, integers: [])
    }
}

/// A tracing exporter as the gateway runs it: the ``RequestTracing`` the data plane asks, and
/// the service that exports what it records (run in the gateway's service group, first in it, so
/// it is shut down last and flushes the spans of the requests drained before it).
package struct TracingBackend: Sendable {
    package let tracing: any RequestTracing
    package let service: any Service

    package init(tracing: any RequestTracing, service: any Service) {
        self.tracing = tracing
        self.service = service
    }
}

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
