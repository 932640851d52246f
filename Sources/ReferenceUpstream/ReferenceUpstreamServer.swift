import Foundation
import Hummingbird
import Logging
import NIOCore
import SAMLEncoding
import ServerSupport
import ServiceLifecycle

/// `samlgate upstream`: an in-memory stand-in for the authentication backend, faithful on the
/// two token-exchange endpoints, so the gateway can be run, tested and demonstrated on one
/// machine.
///
/// - `POST /api/v1/tokens/authn`: checks the required fields, percent-decodes `SAMLResponse`
///   once (form decoding) and demands base64 of XML — a value still percent-encoded after that
///   is `400 double_encoded` — records a token for requestor + deviceId, answers `204`.
/// - `GET /api/v1/tokens/authn?requestor=&deviceId=`: `200` with the token, or `404`.
/// - `POST /api/v2/{sp}/profiles/sso/{partner}`: the same checks, answers a profile of type
///   `appleSSO`.
/// - `GET /reference/exchanges`: the recorded `SAMLResponse` fields, as received.
/// - `ANY /reference/echo/...`: answers the request body unchanged, with the method, URI and
///   headers it saw in `X-Echo-*` headers (to watch what a proxy forwards).
public final class ReferenceUpstreamServer: Sendable {
    public let records = ReferenceRecords()
    public let port = ListeningPort()
    private let group: ServiceGroup

    public init(host: String, port listenPort: Int, tokenTTL: TimeInterval = 86_400, logger: Logger, signals: Bool) {
        let router = Router()
        let records = self.records
        ReferenceRoutes(records: records, tokenTTL: tokenTTL).add(to: router)
        let port = self.port
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: listenPort), serverName: "samlgate-reference-upstream"),
            onServerRunning: { channel in port.publish(channel.localAddress?.port ?? 0) },
            logger: logger)
        group = ServiceGroup(configuration: .init(
            services: [.init(service: app)], gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [], logger: logger))
    }

    public func run() async throws {
        try await group.run()
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
    }
}
