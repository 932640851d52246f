import ServiceLifecycle

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
