import Foundation
import Gateway
import Logging
import ReferenceUpstream
import ServerSupport
import TestIdP

/// Where the demo runs: its own reference upstream, gateway and test IdP on ephemeral loopback
/// ports (stopped at the end), or a running gateway and an IdP key directory.
package final class DemoEnvironment: Sendable {
    package let gatewayURL: String
    package let upstreamURL: String?
    let idp: TestIdentityProvider
    private let upstream: ReferenceUpstreamServer?
    private let gateway: GatewayServer?
    private let tasks: [Task<Void, any Error>]
    private let trustDirectory: String?

    private init(
        gatewayURL: String, upstreamURL: String?, idp: TestIdentityProvider, upstream: ReferenceUpstreamServer?,
        gateway: GatewayServer?, tasks: [Task<Void, any Error>], trustDirectory: String?
    ) {
        self.gatewayURL = gatewayURL
        self.upstreamURL = upstreamURL
        self.idp = idp
        self.upstream = upstream
        self.gateway = gateway
        self.tasks = tasks
        self.trustDirectory = trustDirectory
    }

    /// Starts a reference upstream (with `configuration`) and a gateway in front of it that
    /// trusts a freshly generated test IdP for every MVPD with platform services.
    package static func local(configuration: ReferenceConfiguration = .standard) async throws -> DemoEnvironment {
        let logger = Logger(label: "samlgate.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let pair = try IdPKeyPair.generate(.rsa2048, commonName: "samlgate demo TV provider")
        let idp = try TestIdentityProvider(keyPair: pair)
        let trust = FileManager.default.temporaryDirectory.appendingPathComponent("samlgate-demo-\(UUID().uuidString)")
        for mvpd in configuration.mvpds where mvpd.enablePlatformServices {
            let dir = trust.appendingPathComponent(mvpd.id)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try pair.certificatePEM.write(to: dir.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
            try mvpd.platformMappingId.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
            // One key for every MVPD: each entry is bound to the Issuer the TV provider names for
            // it, as the trust store requires of a shared key.
            try IdPMetadata.defaultEntityID(mvpd: mvpd.id).write(to: dir.appendingPathComponent("issuer"), atomically: true, encoding: .utf8)
        }
        let upstream = ReferenceUpstreamServer(host: "127.0.0.1", port: 0, configuration: configuration, logger: logger, signals: false)
        var tasks = [Task { try await upstream.run() }]
        let upstreamURL = "http://127.0.0.1:\(await upstream.port.value())"
        var settings = GatewayConfiguration()
        settings.port = 0
        settings.upstreams = [upstreamURL]
        settings.trustStore = trust.path
        settings.workers = 1
        let gateway: GatewayServer
        do {
            gateway = try GatewayServer(configuration: settings, logger: logger, signals: false)
        } catch {
            await upstream.stop()
            for task in tasks { _ = try? await task.value }
            try? FileManager.default.removeItem(at: trust)
            throw DemoError(error.message)
        }
        tasks.append(Task { try await gateway.run() })
        return DemoEnvironment(
            gatewayURL: "http://127.0.0.1:\(await gateway.port.value())", upstreamURL: upstreamURL, idp: idp, upstream: upstream,
            gateway: gateway, tasks: tasks, trustDirectory: trust.path)
    }

    /// A running gateway; the TV provider signs with `idpDirectory/key.pem` + `cert.pem` (as
    /// `samlgate idp keygen` writes them — the gateway's trust store must hold that cert).
    package static func external(gatewayURL: String, idpDirectory: String) throws -> DemoEnvironment {
        let directory = URL(fileURLWithPath: idpDirectory)
        let key: String, cert: String
        do {
            key = try String(contentsOf: directory.appendingPathComponent("key.pem"), encoding: .utf8)
            cert = try String(contentsOf: directory.appendingPathComponent("cert.pem"), encoding: .utf8)
        } catch {
            throw DemoError("--idp \(idpDirectory): key.pem and cert.pem cannot be read")
        }
        let idp: TestIdentityProvider
        do {
            idp = try TestIdentityProvider(privateKeyPEM: key, certificatePEM: cert)
        } catch {
            throw DemoError("--idp \(idpDirectory): \(error)")
        }
        let trimmed = gatewayURL.hasSuffix("/") ? String(gatewayURL.dropLast()) : gatewayURL
        return DemoEnvironment(gatewayURL: trimmed, upstreamURL: nil, idp: idp, upstream: nil, gateway: nil, tasks: [], trustDirectory: nil)
    }

    /// Stops what ``local(configuration:)`` started.
    package func stop() async {
        await gateway?.stop()
        await upstream?.stop()
        for task in tasks { _ = try? await task.value }
        if let trustDirectory { try? FileManager.default.removeItem(atPath: trustDirectory) }
    }
}

// MARK: - Errors

/// The demo could not start (the walk itself reports failed steps in the transcript).
package struct DemoError: Error, Sendable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}
