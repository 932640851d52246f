/// Where the spans of the gateway's requests go. The Gateway module only asks for them: the
/// exporter (OTLP over HTTP, the `GatewayTracing` module) is plugged in by `samlgate serve`
/// when `tracing-endpoint` is set. Without it ``GatewayCore/tracing`` is `nil` and the data
/// plane does no span work at all, not even a no-op tracer's.
package protocol RequestTracing: Sendable {
    /// The gateway's span for one request (kind server), started at `uptime` (`DispatchTime`
    /// nanoseconds).
    /// - Parameters:
    ///   - parent: the client's `traceparent` when the gateway accepted it, in its version-00 form
    ///     (``TraceContext/continued(_:)``): the span continues that trace; `nil` starts a new one.
    ///   - state: the client's `tracestate` as the gateway forwards it (only with `parent`): the
    ///     trace state of the span and of its stages, as of any span in the client's trace.
    func startRequest(parent: String?, state: String?, at uptime: UInt64) -> any RequestSpan
}
