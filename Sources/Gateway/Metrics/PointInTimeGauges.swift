import Prometheus

/// Gauges read off the running gateway each time `/metrics` is asked, so that a dashboard and
/// an alert see the state without a request passing: `samlgate_workers`,
/// `samlgate_worker_queue_limit`, `samlgate_upstreams_configured`, `samlgate_upstreams_healthy`,
/// `samlgate_open_connections` and, with a shared replay store, `samlgate_replay_store_up`.
package struct PointInTimeGauges: Sendable {
    package struct State: Sendable {
        package var workers: Int
        package var queueLimit: Int
        package var upstreams: Int
        package var upstreamsHealthy: Int
        package var openConnections: Int
        /// Whether the shared replay store answered its last command; `nil` without one.
        package var replayStoreUp: Bool?
    }

    private let workers: Prometheus.Gauge
    private let queueLimit: Prometheus.Gauge
    private let upstreams: Prometheus.Gauge
    private let upstreamsHealthy: Prometheus.Gauge
    private let openConnections: Prometheus.Gauge
    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        workers = registry.gauge(.workers)
        queueLimit = registry.gauge(.workerQueueLimit)
        upstreams = registry.gauge(.upstreamsConfigured)
        upstreamsHealthy = registry.gauge(.upstreamsHealthy)
        openConnections = registry.gauge(.openConnections)
    }

    func record(_ state: State) {
        workers.set(to: Double(state.workers))
        queueLimit.set(to: Double(state.queueLimit))
        upstreams.set(to: Double(state.upstreams))
        upstreamsHealthy.set(to: Double(state.upstreamsHealthy))
        openConnections.set(to: Double(state.openConnections))
        // Created on the first exposition with a shared store, so a gateway without one has no
        // such series for an alert to misread as down.
        if let up = state.replayStoreUp {
            registry.gauge(.replayStoreUp).set(to: up ? 1 : 0)
        }
    }
}
