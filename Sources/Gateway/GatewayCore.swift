import Foundation
import Logging
import NIOCore
import SAMLVerification
import ServerSupport
import Workers

/// Everything a request needs, built once at start-up and shared by all requests.
package final class GatewayCore: Sendable {
    package let configuration: GatewayConfiguration
    package let trustStore: ReloadableTrustStore
    package let processor: ExchangeProcessor
    package let pool: WorkerPool
    /// Where exchanges are verified: ``pool``, unless the tests run verification in line.
    let verification: any VerificationExecutor
    package let upstream: UpstreamClient
    package let metrics: GatewayMetrics
    /// The Redis every replica records accepted assertions in (`replay-store: redis://…`);
    /// `nil` with the in-process store, which the verifier consults itself.
    package let sharedReplayStore: SharedReplayStore?
    package let logger: Logger
    /// `configuration.trustedProxies`, kept at hand for the per-request header rewrite.
    package let trustedProxies: TrustedProxies
    /// The token buckets per client (`throttle-exchanges`, `throttle-pass-through`); `nil` when off.
    /// With `throttle-store: shared` the exchanges' are ``sharedThrottle``'s instead.
    package let exchangeThrottle: ClientThrottle?
    let sharedThrottle: SharedThrottle?
    package let passThroughThrottle: ClientThrottle?
    /// Fetched metadata refreshed out of turn after a key is not trusted; `nil` without a
    /// `metadata-cache` (no metadata is fetched then).
    package let metadataRefetch: MetadataRefetch?
    /// `max-connections`, `max-connections-per-client`, `max-streams-per-client`.
    package let connections: ConnectionCaps
    /// `max-probe-connections`: `plain-port`'s connections, apart from the clients'.
    package let probeConnections: ConnectionCaps
    /// The audit trail's sink (`audit-log`); `nil` when there is none.
    package let audit: AuditLog?
    /// Where the requests' spans go; `nil` (no span work at all) unless `tracing-endpoint` is set.
    package let tracing: (any RequestTracing)?
    /// Which requests `tracing` records (`tracing-sample-ratio`), decided before it is asked.
    package let traceSampler: TraceSampler
    /// The client listener's TLS (`tls-certificate`); `nil` when it is plain HTTP.
    package let tls: ServerTLS?

    /// Loads the trust store (failing start-up when it cannot be read) and starts the workers.
    package convenience init(
        configuration: GatewayConfiguration, logger: Logger, eventLoopGroup: any EventLoopGroup, tracing: (any RequestTracing)? = nil
    ) throws(ConfigurationError) {
        try self.init(configuration: configuration, logger: logger, eventLoopGroup: eventLoopGroup, tracing: tracing, seams: DataPlaneSeams())
    }

    init(
        configuration: GatewayConfiguration, logger: Logger, eventLoopGroup: any EventLoopGroup, tracing: (any RequestTracing)?,
        seams: DataPlaneSeams
    ) throws(ConfigurationError) {
        let configuration = try configuration.validated()
        self.configuration = configuration
        do {
            trustStore = try ReloadableTrustStore(directory: configuration.trustStore!, metadataCache: configuration.metadataCache)
        } catch {
            throw ConfigurationError("trust store: \(error.description)")
        }
        var options = VerificationOptions()
        options.audience = configuration.audience
        options.clockSkew = configuration.skew
        options.allowSHA1 = configuration.allowSHA1
        options.maxSize = configuration.bodyLimit
        metrics = GatewayMetrics()
        tls = try ServerTLS(configuration: configuration, metrics: metrics.connections, logger: logger)
        metrics.setTrustStoreSize(trustStore.current.providers.count)
        if let path = configuration.auditLog {
            audit = try AuditLog(path: path, metrics: metrics, logger: logger)
        } else {
            audit = nil
        }
        let replayCache: (any ReplayCache)?
        switch configuration.replayStore {
        case .memory:
            replayCache = InMemoryReplayCache(capacity: configuration.replayCapacity)
            sharedReplayStore = nil
        case .redis(let url):
            // Recorded on the event loop after verification (``ExchangeFlow``), not
            // by the verifier on a worker thread.
            replayCache = nil
            sharedReplayStore = try SharedReplayStore(
                url: url, configuration: configuration, metrics: metrics, logger: logger, eventLoopGroup: eventLoopGroup)
        }
        var processor = ExchangeProcessor(
            trustStore: trustStore, options: options, replayCache: replayCache, forwardForm: configuration.forwardForm)
        processor.audit = configuration.auditLog == nil ? nil : ExchangeAudit(key: configuration.auditKey)
        processor.mode = configuration.mode
        self.processor = processor
        pool = WorkerPool(threads: configuration.workerCount, queueLimit: configuration.queue)
        verification = seams.executor ?? pool
        upstream = try UpstreamClient(
            configuration: configuration, metrics: metrics, logger: logger, eventLoopGroup: eventLoopGroup, connector: seams.connector)
        self.logger = logger
        trustedProxies = configuration.trustedProxies
        self.tracing = tracing
        traceSampler = TraceSampler(ratio: configuration.tracingSampleRatio)
        if configuration.throttleShared, let limit = configuration.throttleExchanges, let shared = sharedReplayStore {
            sharedThrottle = SharedThrottle(limit: limit, client: shared.client, metrics: metrics, logger: logger)
            exchangeThrottle = nil
        } else {
            sharedThrottle = nil
            exchangeThrottle = configuration.throttleExchanges.map(ClientThrottle.init)
        }
        passThroughThrottle = configuration.throttlePassThrough.map(ClientThrottle.init)
        metadataRefetch =
            configuration.metadataCache == nil ? nil : MetadataRefetch(minimumInterval: configuration.metadataMinRefetch, metrics: metrics)
        if configuration.throttleExchanges != nil && trustedProxies.isEmpty {
            // Behind a load balancer every client has the balancer's address: one bucket for all.
            logger.notice(
                "the exchange throttle counts each peer address; behind a load balancer or proxy, list it in trusted-proxies",
                metadata: ["throttle_exchanges": .string(configuration.throttleExchanges?.description ?? "off")])
        }
        connections = ConnectionCaps(
            total: configuration.maxConnections, perClient: configuration.maxConnectionsPerClient,
            streamsPerClient: configuration.maxStreamsPerClient > 0 ? configuration.maxStreamsPerClient : configuration.maxConnectionsPerClient)
        probeConnections = ConnectionCaps(total: configuration.maxProbeConnections, perClient: 0)
        metrics.upstreamsConfigured(upstream.endpoints.map(\.baseURL))
        trustStoreLoaded(trustStore.current)
    }

    /// Re-reads the trust store directory; the previous snapshot stays on failure.
    @discardableResult
    package func reloadTrustStore() -> Bool {
        do {
            let store = try trustStore.reload()
            metrics.trustStoreReload(succeeded: true, mvpds: store.providers.count)
            logger.notice("trust store reloaded", metadata: ["mvpds": .stringConvertible(store.providers.count)])
            trustStoreLoaded(store)
            return true
        } catch {
            metrics.trustStoreReload(succeeded: false, mvpds: 0)
            logger.error(
                "trust store reload failed; keeping the previous one",
                metadata: [
                    "code": .string(error.code.rawValue), "error": .string(error.message),
                ])
            return false
        }
    }

    /// How far ahead a certificate's or metadata's expiry is logged as a warning.
    static let expiryWarning: TimeInterval = 30 * 86_400

    /// The MVPDs whose verdicts are reported, not enforced (their `mode` file, else the
    /// gateway's `mode`), sorted.
    package func reportOnlyMVPDs(in store: TrustStore) -> [String] {
        store.mvpds.filter { processor.reporting($0, in: store) }
    }

    /// What every load (start-up, reload) reports of a store: its series and expiry gauges, the MVPDs in
    /// report-only, an error per MVPD whose metadata has expired (not ready), a warning per
    /// certificate or metadata that expires within 30 days, per weak key an `allow-weak-keys`
    /// file admits and per certificate whose expiry cannot be read. Names MVPDs, key
    /// fingerprints and dates only.
    func trustStoreLoaded(_ store: TrustStore, now: Date = Date()) {
        let reporting = reportOnlyMVPDs(in: store)
        metrics.trustStoreLoaded(store, reportOnly: reporting + (processor.reporting(nil, in: store) ? [GatewayMetrics.unknownMVPD] : []))
        if !reporting.isEmpty || configuration.mode == .reportOnly {
            // Loud on purpose: in report-only a forged response reaches the backend.
            logger.warning(
                "report-only: what fails verification is forwarded and reported, not refused",
                metadata: [
                    "mvpds": .string(reporting.joined(separator: ",")), "mode": .string(configuration.mode.rawValue),
                ])
        }
        for mvpd in store.mvpds {
            guard let provider = store.provider(for: mvpd) else { continue }
            if provider.notReadyCode(at: now) == .metadataUnavailable {
                var metadata: Logger.Metadata = ["code": "metadata_unavailable", "mvpd": .string(mvpd)]
                if let problem = provider.cachedCopyProblem { metadata["cached_copy"] = .string(problem) }
                logger.warning("MVPD not ready: its metadata is fetched and no good copy has arrived yet", metadata: metadata)
            } else if let validUntil = provider.validUntil {
                if validUntil <= now {
                    logger.error(
                        "MVPD not ready: its metadata has expired",
                        metadata: [
                            "code": "metadata_expired", "mvpd": .string(mvpd), "valid_until": .string(validUntil.ISO8601Format()),
                        ])
                } else if validUntil.timeIntervalSince(now) < Self.expiryWarning {
                    logger.warning(
                        "metadata expires within 30 days",
                        metadata: [
                            "mvpd": .string(mvpd), "valid_until": .string(validUntil.ISO8601Format()),
                        ])
                }
            }
            for key in provider.keys {
                if let weakness = key.weakness {
                    logger.warning(
                        "weak key trusted because of allow-weak-keys",
                        metadata: ["code": "weak_key", "mvpd": .string(mvpd), "key": .string(key.shortFingerprint), "weakness": .string(weakness)])
                }
                if key.expiryUnreadable {
                    logger.warning(
                        "trusted certificate's expiry cannot be read: no expiry warning or metric for it",
                        metadata: ["mvpd": .string(mvpd), "key": .string(key.shortFingerprint)])
                }
                guard let notAfter = key.notAfter, notAfter.timeIntervalSince(now) < Self.expiryWarning else { continue }
                logger.warning(
                    notAfter <= now ? "trusted certificate has expired (still pinned)" : "trusted certificate expires within 30 days",
                    metadata: [
                        "mvpd": .string(mvpd), "key": .string(key.shortFingerprint), "not_after": .string(notAfter.ISO8601Format()),
                    ])
            }
        }
    }

    /// Stops the workers (after queued jobs) and closes upstream and Redis connections.
    package func shutdown() async {
        pool.shutdown()
        await upstream.shutdown()
        await sharedReplayStore?.shutdown()
    }
}
