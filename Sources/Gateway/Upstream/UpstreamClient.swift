import Dispatch
import Foundation
import Logging
import NIOCore
import NIOSSL
import ServerSupport
import Synchronization

/// The backends as the data plane sees them: the endpoints with their passive health, the
/// round-robin cursor, the timeouts, and one ``UpstreamConnectionPool`` per event loop.
///
/// A timeout or refusal maps to what the gateway documents: connect failure → 502
/// `upstream_unavailable` (after the other healthy upstreams were tried), read/total timeout →
/// 504 `upstream_timeout`.
package final class UpstreamClient: Sendable {
    package let endpoints: [UpstreamEndpoint]
    let metrics: GatewayMetrics
    let coolDownNanos: UInt64
    let readTimeout: TimeAmount
    let totalTimeout: TimeAmount
    /// The client TLS of the `https://` upstreams (`nil` when there is none), shared by the
    /// pools and the health checks, each reading its current context as it connects.
    package let tls: UpstreamTLS?
    private let cursor = Atomic<Int>(0)
    /// Every endpoint in configuration order, made once: the order of a trip when there is one
    /// endpoint (or none is healthy), shared rather than allocated per request.
    private let allIndices: [Int]
    /// Keyed by the event loop's identity; each box is used only on its loop.
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamConnectionPool>]

    init(
        configuration: GatewayConfiguration, metrics: GatewayMetrics, logger: Logger, eventLoopGroup: any EventLoopGroup,
        connector: any UpstreamConnector
    ) throws(ConfigurationError) {
        let endpoints = configuration.upstreams.map(UpstreamEndpoint.init(baseURL:))
        self.endpoints = endpoints
        allIndices = Array(endpoints.indices)
        self.metrics = metrics
        coolDownNanos = UInt64(configuration.upstreamCooldown * 1e9)
        readTimeout = TimeAmount(seconds: configuration.readTimeout)
        totalTimeout = TimeAmount(seconds: configuration.totalTimeout)
        let tls =
            endpoints.contains(where: \.usesTLS) ? try UpstreamTLS(configuration: configuration, metrics: metrics.connections, logger: logger) : nil
        var pools: [ObjectIdentifier: NIOLoopBoundBox<UpstreamConnectionPool>] = [:]
        for eventLoop in eventLoopGroup.makeIterator() {
            let pool = UpstreamConnectionPool(
                eventLoop: eventLoop, endpoints: endpoints, tls: tls, connectTimeout: TimeAmount(seconds: configuration.connectTimeout),
                maxIdlePerEndpoint: configuration.poolSize, connector: connector)
            pools[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue(pool, eventLoop: eventLoop)
        }
        self.pools = pools
        self.tls = tls
    }

    /// The pool of `eventLoop` (call on that loop).
    func pool(on eventLoop: any EventLoop) -> UpstreamConnectionPool {
        pools[ObjectIdentifier(eventLoop)]!.value
    }

    /// Upstreams in rotation: not cooling down, and not down by the health checks.
    package var healthyCount: Int {
        let now = DispatchTime.now().uptimeNanoseconds
        return endpoints.count { $0.isHealthy(at: now) }
    }

    /// Indices of the healthy upstreams (``UpstreamEndpoint/isHealthy(at:)``) starting at the
    /// round-robin cursor; when none is healthy, all of them (a cooling or probed-down upstream
    /// is better than certain failure).
    func pickOrder() -> [Int] {
        let count = endpoints.count
        guard count > 1 else { return allIndices }
        let start = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        let now = DispatchTime.now().uptimeNanoseconds
        var order: [Int] = []
        order.reserveCapacity(count)
        for offset in 0..<count {
            let index = (start &+ offset) % count
            if endpoints[index].isHealthy(at: now) { order.append(index) }
        }
        return order.isEmpty ? allIndices : order
    }

    /// Closes the idle connections of every loop.
    package func shutdown() async {
        for box in pools.values {
            try? await box.eventLoop.submit { box.value.closeAll() }.get()
        }
    }
}

/// One backend base URL and its health. Passive: after a failure that says "cannot reach", it is
/// skipped for the cool-down, then tried again by live traffic. Active, with
/// `upstream-health-path`: ``UpstreamHealthChecker`` marks it down after failed probes and up
/// after passed ones. It is in rotation (and counted by `/readyz`) only while both say healthy,
/// so a cool-down that ends with no traffic cannot put a backend the probes find dead back.
package final class UpstreamEndpoint: Sendable {
    /// `http://host:port`, no trailing slash.
    package let baseURL: String
    /// Where to connect, parsed once from `baseURL`.
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The `Host` header the backend gets: the base URL's authority.
    let authority: String
    /// The TLS server name (SNI): the host, unless it is an IP address (SNI carries names only).
    var serverName: String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }
    /// A path the base URL carries (`http://h/prefix`), put before every forwarded path; or "".
    let pathPrefix: String
    private let unhealthyUntil = Atomic<UInt64>(0)
    /// Set and cleared by the health checks only; always false without them.
    private let probedDown = Atomic<Bool>(false)

    /// - Parameter baseURL: validated by the configuration (`http` or `https`, a host, no query).
    package init(baseURL: String) {
        self.baseURL = baseURL
        let url = URL(string: baseURL)
        usesTLS = url?.scheme == "https"
        host = url?.host ?? "127.0.0.1"
        let explicitPort = url?.port
        port = explicitPort ?? (usesTLS ? 443 : 80)
        let bracketed = host.contains(":") ? "[\(host)]" : host
        authority = explicitPort.map { "\(bracketed):\($0)" } ?? bracketed
        let path = url?.path ?? ""
        pathPrefix = path == "/" ? "" : path
    }

    /// In rotation: not cooling down, and not down by the health checks.
    package func isHealthy(at now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        !probedDown.load(ordering: .relaxed) && unhealthyUntil.load(ordering: .relaxed) <= now
    }

    /// The health checks' verdict (``UpstreamHealthChecker``), apart from the passive cool-down.
    func setProbedDown(_ down: Bool) {
        probedDown.store(down, ordering: .relaxed)
    }

    package func markFailed(coolDownNanos: UInt64) {
        unhealthyUntil.store(DispatchTime.now().uptimeNanoseconds + coolDownNanos, ordering: .relaxed)
    }

    package func markHealthy() {
        if unhealthyUntil.load(ordering: .relaxed) != 0 { unhealthyUntil.store(0, ordering: .relaxed) }
    }
}
