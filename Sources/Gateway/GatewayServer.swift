import Logging
import NIOCore
import NIOPosix
import ServerSupport
import ServiceLifecycle
import UnixSignals

/// The running gateway: the HTTP server, the SIGHUP reloader (the trust-store poller when
/// `trust-store-poll` is set, the metadata refresher when `metadata-cache` is, the upstream health
/// checks when `upstream-health-path` is) and the resources that must be
/// released after the last request (workers, upstream connections), in one service group.
///
/// Shutdown (SIGTERM/SIGINT in `serve`, ``stop()`` in tests) is graceful: the server stops
/// accepting and finishes in-flight requests, then workers and upstream connections close.
package final class GatewayServer: Sendable {
    package let core: GatewayCore
    private let group: ServiceGroup
    private let eventLoopGroup: MultiThreadedEventLoopGroup
    package let port = ListeningPort()
    /// The probe listener's (`plain-port`), published only when there is one.
    package let plainPort = ListeningPort()

    /// - Parameters:
    ///   - signals: handle SIGTERM/SIGINT (drain) and SIGHUP (reload); off in tests.
    ///   - tracing: the span exporter, when `tracing-endpoint` is set.
    package init(
        configuration: GatewayConfiguration, logger: Logger, signals: Bool, tracing: TracingBackend? = nil
    )
        throws(ConfigurationError)
    {
        let eventLoopGroup = MultiThreadedEventLoopGroup.singleton
        let core = try GatewayCore(configuration: configuration, logger: logger, eventLoopGroup: eventLoopGroup, tracing: tracing?.tracing)
        self.core = core
        self.eventLoopGroup = eventLoopGroup
        var services: [any Service] = [ResourcesService(core: core)]
        if signals { services.append(TrustStoreReloadService(core: core)) }
        let upstreamTLS = core.upstream.tls.flatMap { $0.readsFiles ? $0 : nil }
        if core.tls != nil || upstreamTLS != nil, configuration.tlsPoll > 0 {
            services.append(
                TLSPollService(tls: core.tls, upstreamTLS: upstreamTLS, interval: .milliseconds(Int64(configuration.tlsPoll * 1000))))
        }
        if configuration.trustStorePoll > 0 {
            services.append(TrustStorePollService(core: core, interval: .milliseconds(Int64(configuration.trustStorePoll * 1000))))
        }
        if configuration.metadataCache != nil {
            services.append(MetadataRefreshService(core: core, eventLoopGroup: eventLoopGroup))
        }
        if let checker = UpstreamHealthChecker(core: core, eventLoopGroup: eventLoopGroup) {
            // Before the server, so stopped after it has drained: rotation stays informed meanwhile.
            services.append(UpstreamHealthCheckService(checker: checker))
        }
        services.append(GatewayHTTPServer(core: core, role: .clients(tls: core.tls), port: port, eventLoopGroup: eventLoopGroup))
        if configuration.plainPort != nil {
            services.append(GatewayHTTPServer(core: core, role: .probes, port: plainPort, eventLoopGroup: eventLoopGroup))
        }
        var configured = services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        if let tracing {
            // First, so shut down last (the group goes last to first): after everything that
            // records spans. An exporter that stops, whatever the reason, never stops the gateway.
            configured.insert(.init(service: tracing.service, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore), at: 0)
        }
        group = ServiceGroup(
            configuration: .init(
                services: configured,
                gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [],
                logger: logger))
    }

    /// Runs until shut down.
    ///
    /// With `throttle-store: shared` the throttle's script is run once before listening
    /// (``SharedThrottle/checkAtStartUp(on:)``): a Redis that refuses it would leave every
    /// exchange unthrottled, with nothing but a counter to say so, until its configuration
    /// changes, so the gateway does not start (a ``ConfigurationError`` naming what to allow).
    /// A Redis that cannot answer for now does not stop it: the throttle fails open.
    package func run() async throws {
        if let throttle = core.sharedThrottle, case .refused(let why) = await throttle.checkAtStartUp(on: eventLoopGroup.next()) {
            await core.shutdown()
            await core.audit?.close()
            throw ConfigurationError("throttle-store: replay_store_unsupported: \(why)")
        }
        try await group.run()
    }

    /// Starts a graceful shutdown.
    package func stop() async {
        await group.triggerGracefulShutdown()
    }
}

/// Releases the workers and the upstream client when the group shuts down (it is first in the
/// group, so it is shut down last, after the server has drained).
struct ResourcesService: Service {
    let core: GatewayCore

    func run() async throws {
        try? await gracefulShutdown()
        await core.shutdown()
        // After the last request: its audit line is written, then the file synced and closed.
        await core.audit?.close()
    }
}

/// Reloads the trust store and the TLS files on SIGHUP, and reopens the audit log (after a rotation).
struct TrustStoreReloadService: Service {
    let core: GatewayCore

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            core.reloadTrustStore()
            core.tls?.reload(trigger: "sighup", retryingRefused: true)
            core.upstream.tls?.reload(trigger: "sighup", retryingRefused: true)
            core.audit?.reopen()
        }
    }
}
