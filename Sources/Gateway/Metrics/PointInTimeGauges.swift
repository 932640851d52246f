import CoreMetrics
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

    private let workers: CoreMetrics.Gauge
    private let queueLimit: CoreMetrics.Gauge
    private let upstreams: CoreMetrics.Gauge
    private let upstreamsHealthy: CoreMetrics.Gauge
    private let openConnections: CoreMetrics.Gauge
    private let factory: PrometheusMetricsFactory

    init(factory: PrometheusMetricsFactory) {
        self.factory = factory
        workers = CoreMetrics.Gauge(label: "samlgate_workers", factory: factory)
        queueLimit = CoreMetrics.Gauge(label: "samlgate_worker_queue_limit", factory: factory)
        upstreams = CoreMetrics.Gauge(label: "samlgate_upstreams_configured", factory: factory)
        upstreamsHealthy = CoreMetrics.Gauge(label: "samlgate_upstreams_healthy", factory: factory)
        openConnections = CoreMetrics.Gauge(label: "samlgate_open_connections", factory: factory)
    }

    func record(_ state: State) {
        workers.record(state.workers)
        queueLimit.record(state.queueLimit)
        upstreams.record(state.upstreams)
        upstreamsHealthy.record(state.upstreamsHealthy)
        openConnections.record(state.openConnections)
        // Created on the first exposition with a shared store, so a gateway without one has no
        // such series for an alert to misread as down.
        if let up = state.replayStoreUp {
            CoreMetrics.Gauge(label: "samlgate_replay_store_up", factory: factory).record(up ? 1 : 0)
        }
    }
}
