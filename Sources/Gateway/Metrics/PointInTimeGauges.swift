// The gauges set when `/metrics` is read rather than when something happens: the running
// gateway's state, and the time left on the trusted certificates and metadata.

import Foundation
import Prometheus
import SAMLVerification
import Synchronization

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

// MARK: - Trust expiry

/// The gauges that make rotation and expiry visible before they break sign-ins:
/// `samlgate_trust_certificate_expiry_seconds{mvpd,key}` (seconds until each trusted
/// certificate's `notAfter`) and `samlgate_trust_metadata_expiry_seconds{mvpd}` (seconds until
/// each metadata's `validUntil`); negative once passed. A certificate whose `notAfter` cannot be
/// read has no expiry gauge but `samlgate_trust_certificate_expiry_unreadable{mvpd,key} 1`.
///
/// Replaced as a whole on every trust-store load, so a key rotated out or an MVPD removed
/// stops being reported instead of lingering with a stale value. The values count down: they
/// are recomputed from the stored dates each time the metrics are read.
final class TrustExpiryGauges: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let current = Mutex<[(gauge: Gauge, date: Date)]>([])
    /// `samlgate_trust_certificate_expiry_unreadable{mvpd,key}`, each set to 1.
    private let unreadableGauges = Mutex<[Gauge]>([])

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Forgets the previous store's gauges and makes this one's.
    func replace(with store: TrustStore) {
        var made: [(gauge: Gauge, date: Date)] = []
        var unreadable: [Gauge] = []
        for mvpd in store.mvpds {
            guard let provider = store.provider(for: mvpd) else { continue }
            var seen: Set<String> = []
            for key in provider.keys where seen.insert(key.shortFingerprint).inserted {
                let labels = [("mvpd", mvpd), ("key", key.shortFingerprint)]
                if key.expiryUnreadable { unreadable.append(registry.gauge(.trustCertificateExpiryUnreadable, labels)) }
                guard let notAfter = key.notAfter else { continue }
                made.append((registry.gauge(.trustCertificateExpiry, labels), notAfter))
            }
            if let validUntil = provider.validUntil {
                made.append((registry.gauge(.trustMetadataExpiry, [("mvpd", mvpd)]), validUntil))
            }
        }
        let old = current.withLock { gauges in
            let old = gauges
            gauges = made
            return old
        }
        let kept = Set(made.map { ObjectIdentifier($0.gauge) })
        for (gauge, _) in old where !kept.contains(ObjectIdentifier(gauge)) {
            registry.unregisterGauge(gauge)
        }
        for gauge in unreadable { gauge.set(1.0) }
        let oldUnreadable = unreadableGauges.withLock { gauges in
            let old = gauges
            gauges = unreadable
            return old
        }
        let keptUnreadable = Set(unreadable.map(ObjectIdentifier.init))
        for gauge in oldUnreadable where !keptUnreadable.contains(ObjectIdentifier(gauge)) {
            registry.unregisterGauge(gauge)
        }
        refresh()
    }

    /// Sets each gauge to the seconds left from `now`.
    func refresh(now: Date = Date()) {
        for (gauge, date) in current.withLock({ $0 }) {
            gauge.set(date.timeIntervalSince(now).rounded())
        }
    }
}
