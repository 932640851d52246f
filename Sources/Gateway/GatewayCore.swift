import Logging
import Workers
import NIOCore
import SAMLVerification

/// Everything a request needs, built once at start-up and shared by all requests.
public final class GatewayCore: Sendable {
    public let configuration: GatewayConfiguration
    public let trustStore: ReloadableTrustStore
    public let processor: ExchangeProcessor
    public let pool: WorkerPool
    public let upstream: UpstreamClient
    public let metrics: GatewayMetrics
    public let logger: Logger
    /// `configuration.trustedProxies`, kept at hand for the per-request header rewrite.
    public let trustedProxies: TrustedProxies

    /// Loads the trust store (failing start-up when it cannot be read) and starts the workers.
    public init(configuration: GatewayConfiguration, logger: Logger, eventLoopGroup: any EventLoopGroup) throws(ConfigurationError) {
        let configuration = try configuration.validated()
        self.configuration = configuration
        do {
            trustStore = try ReloadableTrustStore(directory: configuration.trustStore!)
        } catch {
            throw ConfigurationError("trust store: \(error.message)")
        }
        var options = VerificationOptions()
        options.audience = configuration.audience
        options.clockSkew = configuration.skew
        options.allowSHA1 = configuration.allowSHA1
        options.maxSize = configuration.bodyLimit
        metrics = GatewayMetrics()
        metrics.setTrustStoreSize(trustStore.current.providers.count)
        processor = ExchangeProcessor(
            trustStore: trustStore, options: options, replayCache: InMemoryReplayCache(capacity: configuration.replayCapacity),
            forwardForm: configuration.forwardForm)
        pool = WorkerPool(threads: configuration.workerCount, queueLimit: configuration.queue)
        upstream = try UpstreamClient(configuration: configuration, metrics: metrics, eventLoopGroup: eventLoopGroup)
        self.logger = logger
        trustedProxies = configuration.trustedProxies
    }

    /// Re-reads the trust store directory; the previous snapshot stays on failure.
    @discardableResult
    public func reloadTrustStore() -> Bool {
        do {
            let store = try trustStore.reload()
            metrics.trustStoreReload(succeeded: true, mvpds: store.providers.count)
            logger.notice("trust store reloaded", metadata: ["mvpds": .stringConvertible(store.providers.count)])
            return true
        } catch {
            metrics.trustStoreReload(succeeded: false, mvpds: 0)
            logger.error("trust store reload failed; keeping the previous one", metadata: ["error": .string(error.message)])
            return false
        }
    }

    /// Stops the workers (after queued jobs) and closes upstream connections.
    public func shutdown() async {
        pool.shutdown()
        await upstream.shutdown()
    }
}
