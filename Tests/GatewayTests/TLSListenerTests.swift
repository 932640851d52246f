import AsyncHTTPClient
import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import NIOSSL
import Testing

/// The client listener serving TLS (`tls-certificate`, `tls-key`), HTTP/2 and HTTP/1.1 by ALPN,
/// with and without client certificates, and the plain probe listener beside it; each through a
/// real TLS client (AsyncHTTPClient on swift-nio-ssl, `openssl s_client`) on loopback, with the
/// tests' own certificate authority (``TestPKI``).
@Suite("TLS listener")
struct TLSListenerTests {
    /// A harness serving TLS with a fresh authority's `localhost` certificate, and a probe listener.
    static func withTLS(
        _ configure: @escaping (inout GatewayConfiguration, TestPKI) throws -> Void = { _, _ in },
        _ body: (GatewayHarness, TestPKI) async throws -> Void
    ) async throws {
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("server", commonName: "localhost")
        var failure: (any Error)?
        try await withHarness(configure: {
            $0.tlsCertificate = certificate
            $0.tlsKey = key
            $0.plainPort = 0
            do { try configure(&$0, pki) } catch { failure = error }
        }) { (h: GatewayHarness) async throws in
            if let failure { throw failure }
            try await body(h, pki)
        }
    }

    /// A backend: a gateway serving TLS with a `localhost` certificate of `pki`'s and requiring
    /// a client certificate of `pki`'s, before the reference upstream.
    static func withMutualTLSBackend(_ pki: TestPKI, _ body: (GatewayHarness) async throws -> Void) async throws {
        let (certificate, key) = try pki.issue("backend", commonName: "localhost")
        try await withHarness(
            configure: {
                $0.tlsCertificate = certificate
                $0.tlsKey = key
                $0.tlsClientCA = pki.caPath
                $0.tlsClientAuth = .require
                $0.plainPort = 0
            }, body)
    }

    static func port(_ h: GatewayHarness) -> Int {
        Int(h.gatewayURL.split(separator: ":").last!)!
    }

    static func failures(_ h: GatewayHarness, _ reason: String) async throws -> Double {
        try await h.metric("samlgate_tls_handshake_failures_total{reason=\"\(reason)\"}")
    }

    @Test("HTTP/2 and HTTP/1.1 by ALPN: a v1 exchange and its token passed through on each; handshakes counted by version and protocol")
    func bothProtocols() async throws {
        try await Self.withTLS { h, pki in
            for http1Only in [false, true] {
                let client = try pki.client(http1Only: http1Only)
                let device = http1Only ? "device-h1" : "device-h2"
                let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue()), device: device))
                let exchange = try await h.send(.POST, "/api/v1/tokens/authn", body: body, via: client)
                #expect(exchange.status == 204, "\(exchange.body)")
                #expect(exchange.version == (http1Only ? .http1_1 : .http2))
                let token = try await h.send(.GET, "/api/v1/tokens/authn?requestor=REF&deviceId=\(device)", headers: [], via: client)
                #expect(token.status == 200 && token.body.contains("\"mvpd\":\"Cablevision\""), "\(token.body)")
                try await client.shutdown()
            }
            #expect(try await h.metric("samlgate_tls_handshakes_total{version=\"tls1.3\",alpn=\"h2\"}") == 1)
            #expect(try await h.metric("samlgate_tls_handshakes_total{version=\"tls1.3\",alpn=\"http/1.1\"}") == 1)
            #expect(try await h.metric("samlgate_client_connections_total{protocol=\"h2\"}") == 1)
            #expect(try await h.metric("samlgate_tls_certificate_not_after_timestamp_seconds") > Date().timeIntervalSince1970)
        }
    }

    @Test("http2 false: ALPN offers HTTP/1.1 only, so a client that would speak HTTP/2 is served HTTP/1.1")
    func http2Off() async throws {
        try await Self.withTLS({ configuration, _ in configuration.http2 = false }) { h, pki in
            let client = try pki.client(http1Only: false)
            let answer = try await h.send(.GET, "/api/v1/config/REF", headers: [], via: client)
            #expect(answer.status == 200 && answer.version == .http1_1, "\(answer.version)")
            try await client.shutdown()
            #expect(try await h.metric("samlgate_tls_handshakes_total{version=\"tls1.3\",alpn=\"http/1.1\"}") == 1)
            #expect(try await h.metric("samlgate_tls_handshakes_total{version=\"tls1.3\",alpn=\"h2\"}") == 0)
        }
    }

    @Test("the probe listener serves /healthz, /readyz (reporting TLS) and /metrics in plain HTTP, and refuses the API with 403 tls_required")
    func probeListener() async throws {
        try await Self.withTLS { h, _ in
            let probes = try #require(h.probesURL)
            #expect(try await h.send(.GET, "/healthz", to: probes).status == 200)
            let ready = try await h.send(.GET, "/readyz", to: probes)
            #expect(ready.status == 200 && ready.json?["tls"] as? String == "ok", "\(ready.body)")
            let refused = try await h.send(.GET, "/api/v1/config/REF", to: probes)
            #expect(refused.status == 403 && refused.reason == "tls_required", "\(refused.body)")
        }
    }

    @Test(
        "failed handshakes counted by reason: plain HTTP, TLS 1.1, a client silent past header-timeout, one not trusting the certificate"
    )
    func handshakeFailures() async throws {
        try await Self.withTLS({ configuration, _ in configuration.headerTimeout = 1 }) { h, _ in
            let port = Self.port(h)
            let plain = try RawConnection(port: port, readTimeout: 5)
            try await plain.write("GET /api/v1/config/REF HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try await plain.bytesUntilClose()
            #expect(try await Self.failures(h, "http_request") == 1)

            var old = TLSConfiguration.makeClientConfiguration()
            old.certificateVerification = .none
            old.minimumTLSVersion = .tlsv1
            old.maximumTLSVersion = .tlsv11
            let oldClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: old))
            await #expect(throws: (any Error).self) { try await h.send(.GET, "/healthz", via: oldClient) }
            try await oldClient.shutdown()
            #expect(try await Self.failures(h, "protocol_version") >= 1)

            let silent = try RawConnection(port: port, readTimeout: 30)
            #expect(try await silent.closedByServer())
            #expect(try await Self.failures(h, "timeout") == 1)

            // The tests' shared client trusts only the system's authorities (it may retry: at least once).
            await #expect(throws: (any Error).self) { try await h.send(.GET, "/healthz") }
            #expect(try await RemoteMetadataTests.eventually(5) { try await Self.failures(h, "client_alert") >= 1 })
        }
    }

    @Test(
        "tls-client-auth require: no certificate, or another authority's, fails the handshake (counted); a good one is served and audited"
    )
    func requiredClientCertificate() async throws {
        let audit = TestScratch.directory("samlgate-audit").path
        try FileManager.default.createDirectory(atPath: audit, withIntermediateDirectories: true)
        let auditLog = audit + "/audit.log"
        try await Self.withTLS({ configuration, pki in
            configuration.tlsClientCA = pki.caPath
            configuration.tlsClientAuth = .require
            configuration.auditLog = auditLog
            try pki.issue("app", commonName: "app-1", organization: "Example Streaming", server: false)
        }) { h, pki in
            // AsyncHTTPClient may retry a connection that failed: each attempt is counted.
            let anonymous = try pki.client()
            await #expect(throws: (any Error).self) { try await h.send(.GET, "/api/v1/config/REF", headers: [], via: anonymous) }
            try await anonymous.shutdown()
            #expect(try await RemoteMetadataTests.eventually(5) { try await Self.failures(h, "no_client_certificate") >= 1 })

            let stranger = try TestPKI(name: "Another CA")
            try stranger.issue("app", commonName: "app-1", server: false)
            let strangerClient = try Self.client(trusting: pki, presenting: stranger, "app")
            await #expect(throws: (any Error).self) { try await h.send(.GET, "/api/v1/config/REF", headers: [], via: strangerClient) }
            try await strangerClient.shutdown()
            #expect(try await RemoteMetadataTests.eventually(5) { try await Self.failures(h, "bad_client_certificate") >= 1 })

            let app = try pki.client(certificate: "app")
            #expect(try await h.send(.GET, "/api/v1/config/REF", headers: [], via: app).status == 200)
            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: body, via: app).status == 204)
            try await app.shutdown()
        }
        let line = try String(contentsOfFile: auditLog, encoding: .utf8)
        #expect(line.contains(#""client_certificate":"CN=app-1,O=Example Streaming""#), "\(line)")
    }

    @Test("tls-client-auth optional: served without a certificate; with one, the throttle counts the certificate, not the shared address")
    func optionalClientCertificateThrottle() async throws {
        try await Self.withTLS({ configuration, pki in
            configuration.tlsClientCA = pki.caPath
            configuration.tlsClientAuth = .optional
            configuration.throttlePassThrough = ThrottleRate(rate: 0.001, burst: 0)
            try pki.issue("one", commonName: "app-one", server: false)
            try pki.issue("two", commonName: "app-two", server: false)
        }) { h, pki in
            let one = try pki.client(certificate: "one")
            let two = try pki.client(certificate: "two")
            let anonymous = try pki.client()
            // Same address, three buckets: each certificate's, and the address's.
            #expect(try await h.send(.GET, "/api/v1/config/REF", headers: [], via: one).status == 200)
            #expect(try await h.send(.GET, "/api/v1/config/REF", headers: [], via: one).status == 429)
            #expect(try await h.send(.GET, "/api/v1/config/REF", headers: [], via: two).status == 200)
            #expect(try await h.send(.GET, "/api/v1/config/REF", headers: [], via: anonymous).status == 200)
            for client in [one, two, anonymous] { try await client.shutdown() }
        }
    }

    @Test(
        "upstream mutual TLS: a backend requiring a client certificate is reached with upstream-tls-certificate and upstream-ca; else 502"
    )
    func upstreamMutualTLS() async throws {
        let pki = try TestPKI()
        let (clientCertificate, clientKey) = try pki.issue("gateway", commonName: "samlgate-front", server: false)
        try await Self.withMutualTLSBackend(pki) { backend in
            try await withHarness(
                upstreamURL: backend.gatewayURL,
                configure: {
                    $0.upstreamCA = pki.caPath
                    $0.upstreamTLSCertificate = clientCertificate
                    $0.upstreamTLSKey = clientKey
                }
            ) { (front: GatewayHarness) async throws in
                let reply = try await front.send(.GET, "/api/v1/config/REF")
                #expect(reply.status == 200, "\(reply.body)")
            }
            try await withHarness(upstreamURL: backend.gatewayURL, configure: { $0.upstreamCA = pki.caPath }) {
                (front: GatewayHarness) async throws in
                let reply = try await front.send(.GET, "/api/v1/config/REF")
                #expect(reply.status == 502 && reply.reason == "upstream_unavailable", "\(reply.body)")
            }
            #expect(try await Self.failures(backend, "no_client_certificate") >= 1)
        }
    }

    @Test(
        "upstream client certificate renewed on disk: the poll takes it for new connections; a bad pair keeps the previous one, counted, on /readyz"
    )
    func upstreamTLSReload() async throws {
        let pki = try TestPKI()
        let stranger = try TestPKI(name: "Another CA")
        let (good, goodKey) = try pki.issue("gateway", commonName: "samlgate-front", server: false)
        let (refused, refusedKey) = try stranger.issue("gateway", commonName: "samlgate-front", server: false)
        let directory = TestScratch.directory("samlgate-upstream-tls").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (clientCertificate, clientKey) = (directory + "/client.pem", directory + "/client.key")
        func publish(_ certificate: String, _ key: String) throws {
            try TestPKI.publish((certificate, key), to: (clientCertificate, clientKey))
        }
        try publish(refused, refusedKey)
        try await Self.withMutualTLSBackend(pki) { backend in
            try await withHarness(
                upstreamURL: backend.gatewayURL,
                configure: {
                    $0.upstreamCA = pki.caPath
                    $0.upstreamTLSCertificate = clientCertificate
                    $0.upstreamTLSKey = clientKey
                    $0.tlsPoll = 0.1
                    $0.poolSize = 0
                }
            ) { (front: GatewayHarness) async throws in
                let (ok, failed) = ("samlgate_upstream_tls_reloads_total{result=\"ok\"}", "samlgate_upstream_tls_reloads_total{result=\"failed\"}")
                /// Polls the scrape until `series` exceeds `floor`.
                func above(_ series: String, _ floor: Double) async throws -> Bool {
                    let deadline = Date().addingTimeInterval(TestTiming.seconds(10))
                    while Date() < deadline {
                        if try await front.metric(series) > floor { return true }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return false
                }
                #expect(try await front.send(.GET, "/api/v1/config/REF").status == 502)
                try publish(good, goodKey)
                // A poll between the two files' writes may refuse the half-published pair first.
                #expect(try await above(ok, 0))
                let renewed = try await front.send(.GET, "/api/v1/config/REF")
                #expect(renewed.status == 200, "\(renewed.body)")
                // Another authority's key beside the good certificate: refused, the good pair kept.
                let failedBefore = try await front.metric(failed)
                try publish(good, refusedKey)
                #expect(try await above(failed, failedBefore))
                let ready = try await front.send(.GET, "/readyz").body
                #expect(ready.contains("\"upstreamTLS\":\"reload_failed\"") && !ready.contains("Error") && !ready.contains("/"), "\(ready)")
                // A new connection (nothing is pooled) still gets the good pair.
                #expect(try await front.send(.GET, "/api/v1/config/REF").status == 200)
            }
        }
    }

    @Test("the backend is told the client spoke https (X-Forwarded-Proto), over HTTP/2 and HTTP/1.1")
    func forwardedProto() async throws {
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("server", commonName: "localhost")
        let echo = try await EchoUpstream.start()
        do {
            try await withHarness(
                upstreamURL: echo.url,
                configure: {
                    $0.tlsCertificate = certificate
                    $0.tlsKey = key
                }
            ) { (h: GatewayHarness) async throws in
                for http1Only in [false, true] {
                    let client = try pki.client(http1Only: http1Only)
                    #expect(try await h.send(.GET, "/api/v2/REF/configuration", headers: [], via: client).status == 200)
                    try await client.shutdown()
                }
            }
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
        #expect(echo.requests.count == 2)
        for request in echo.requests { #expect(request.header("x-forwarded-proto") == ["https"]) }
    }

    @Test("a recorded request's span carries its protocol: HTTP/2 over TLS 1.3")
    func spanProtocol() async throws {
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("server", commonName: "localhost")
        let client = try pki.client()
        let (spans, _, _) = try await TracingTests.traced(configure: {
            $0.tlsCertificate = certificate
            $0.tlsKey = key
        }) { (h: GatewayHarness) async throws in
            #expect(try await h.send(.GET, "/api/v2/REF/configuration", headers: [], via: client).version == .http2)
        }
        try await client.shutdown()
        let server = try #require(spans.first { $0.kind == 2 })
        #expect(server.attributes["network.protocol.version"] == "2" && server.attributes["tls.protocol.version"] == "1.3", "\(server.attributes)")
    }

    /// A client trusting `pki`'s authority and presenting `presenting`'s certificate `name`.
    static func client(trusting pki: TestPKI, presenting other: TestPKI, _ name: String) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(pki.caPath))
        tls.certificateChain = try NIOSSLCertificate.fromPEMFile(other.directory + "/\(name).pem").map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: other.directory + "/\(name).key", format: .pem))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }
}
