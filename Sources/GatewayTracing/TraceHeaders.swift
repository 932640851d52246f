import Tracing

/// The carrier the tracer extracts the client's accepted `traceparent` from and injects the
/// gateway's span into: a dictionary, not the request's headers, because the gateway decides
/// which `traceparent` counts (``TraceContext``) and writes the upstream's itself.
struct TraceHeaders: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }

    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}
