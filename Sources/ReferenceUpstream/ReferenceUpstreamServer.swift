import Foundation
import Hummingbird
import Logging
import NIOCore
import SAMLEncoding
import ServerSupport
import ServiceLifecycle

/// `samlgate upstream`: an in-memory stand-in for the authentication backend (Adobe Pass REST
/// API v1 and v2), complete for the Apple SSO cookbook flows, so the gateway can be run, tested
/// and demonstrated on one machine. The routes are listed in docs/reference-upstream.md
/// and docs/openapi.yaml; what it knows (requestors, MVPDs, lifetimes) comes from
/// ``ReferenceConfiguration``.
package final class ReferenceUpstreamServer: Sendable {
    package let store: ReferenceStore
    package let configuration: ReferenceConfiguration
    package let port = ListeningPort()
    private let group: ServiceGroup

    /// - Parameter exchangeLog: how many token exchanges `/reference/exchanges` keeps.
    package init(
        host: String, port listenPort: Int, configuration: ReferenceConfiguration = .standard,
        exchangeLog: Int = ReferenceStore.defaultExchangeLimit, logger: Logger, signals: Bool
    ) {
        self.configuration = configuration
        let store = ReferenceStore(exchangeLimit: exchangeLog)
        self.store = store
        let router = Router()
        ReferenceRoutes(configuration: configuration, store: store).add(to: router)
        let port = self.port
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: listenPort), serverName: "samlgate-reference-upstream"),
            onServerRunning: { channel in port.publish(channel.localAddress?.port ?? 0) },
            logger: logger)
        group = ServiceGroup(
            configuration: .init(
                services: [.init(service: app)], gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [], logger: logger))
    }

    package func run() async throws {
        try await group.run()
    }

    package func stop() async {
        await group.triggerGracefulShutdown()
    }
}
