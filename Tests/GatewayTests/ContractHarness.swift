import CLITestSupport
import Foundation
import GatewayTestSupport
import Logging
import ReferenceUpstream

/// The reference upstream, and the gateway in front of it, configured as the backend's
/// documentation writes its samples: the MVPD `Cablevision` is known to Apple's framework by the
/// platform id `Cablevision` (the id in the documented `AP-Partner-Framework-Status` sample), in
/// the reference's configuration and in the gateway's trust store alike. Each request of a
/// contract case goes once to each: ``direct(_:)`` and ``throughGateway(_:)``.
final class ContractHarness: Sendable {
    static let serviceProvider = "REF"
    static let mvpd = "Cablevision"
    static let providerID = "Cablevision"
    /// The bearer token the reference accepts without client registration.
    static let token = "token-1"

    /// The documentation's sample headers of the v2 exchange (REST API v2, "Create and retrieve
    /// profile using partner authentication response"): a granted status for `Cablevision`
    /// expiring in 2034 (`expirationDate` a string), and an `X-Device-Info` whose JSON lacks a comma.
    static let samplePartnerStatus =
        "ewogICAgImZyYW1ld29ya1Blcm1pc3Npb25JbmZvIjogewogICAgICAiYWNjZXNzU3RhdHVzIjogImdyYW50ZWQiCiAgICB9LAogICAgImZyYW1ld29ya1Byb3ZpZGVySW5mbyIgOiB7"
        + "CiAgICAgICJpZCIgOiAiQ2FibGV2aXNpb24iLAogICAgICAiZXhwaXJhdGlvbkRhdGUiIDogIjIwMjU0MzA2MzYwMDAiCiAgICB9Cn0="
    static let sampleDeviceInfo =
        "ewoJInByaW1hcnlIYXJkd2FyZVR5cGUiOiAiU2V0VG9wQm94IiwKCSJtb2RlbCI6ICJUViA1dGggR2VuIiwKCSJtYW51ZmFjdHVyZXIiOiAiQXBwbGUiLAoJIm9zTmFtZSI6ICJ0dk9T"
        + "IgoJIm9zVmVuZG9yIjogIkFwcGxlIiwKCSJvc1ZlcnNpb24iOiAiMTEuMCIKfQ=="
    static let sampleDeviceIdentifier = "fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi"

    let gateway: GatewayHarness
    let upstream: ReferenceUpstreamServer
    let upstreamURL: String

    private init(gateway: GatewayHarness, upstream: ReferenceUpstreamServer, upstreamURL: String) {
        self.gateway = gateway
        self.upstream = upstream
        self.upstreamURL = upstreamURL
    }

    /// The request sent to the reference upstream itself, with `X-Request-Id: trace` as the
    /// gateway would add it.
    func direct(_ request: ContractRequest, trace: String) async throws -> GatewayHarness.Reply {
        try await GatewayHarness.request(
            request.method, upstreamURL + request.path, body: request.body, headers: request.headers + [("X-Request-Id", trace)])
    }

    /// The request sent to the gateway, which forwards it to the same reference upstream.
    func throughGateway(_ request: ContractRequest) async throws -> GatewayHarness.Reply {
        try await gateway.send(request.method, request.path, body: request.body, headers: request.headers)
    }

    /// Runs `body` with a fresh reference upstream and gateway; both are always stopped.
    static func with(_ body: (ContractHarness) async throws -> Void) async throws {
        var configuration = ReferenceConfiguration.standard
        configuration.staticAccessTokens = [token]
        precondition(configuration.mvpd(mvpd)?.platformMappingId == providerID, "the standard configuration maps Cablevision to itself")
        let server = ReferenceUpstreamServer(
            host: "127.0.0.1", port: 0, configuration: configuration, logger: Logger(label: "contract", factory: { _ in SwiftLogNoOpLogHandler() }),
            signals: false)
        let task = Task { try await server.run() }
        let trust = TestScratch.directory("samlgate-contract-trust")
        func stop() async {
            await server.stop()
            _ = try? await task.value
            try? FileManager.default.removeItem(at: trust)
        }
        do {
            let entry = trust.appendingPathComponent(mvpd)
            try FileManager.default.createDirectory(at: entry, withIntermediateDirectories: true)
            try GatewayHarness.idpPair.certificatePEM.write(to: entry.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
            try providerID.write(to: entry.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
            let url = "http://127.0.0.1:\(await server.port.value())"
            try await withHarness(upstreamURL: url, configure: { $0.trustStore = trust.path }) { gateway in
                try await body(ContractHarness(gateway: gateway, upstream: server, upstreamURL: url))
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}
