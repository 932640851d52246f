import Foundation
import Gateway
import GatewayTestSupport
import SAMLVerification
import Testing

/// Report-only mode through real HTTP: everything is verified as when enforcing, and what would
/// be refused is forwarded instead — encoded once the cookbook's way when the document could be
/// decoded, else as the client sent it — and reported (log line, metrics, `/readyz`).
@Suite("Report-only mode")
struct ReportOnlyTests {
    /// The value of `SAMLResponse` in a forwarded form body.
    static func samlValue(_ body: String) -> String? {
        body.split(separator: "&").first { $0.hasPrefix("SAMLResponse=") }.map { String($0.dropFirst("SAMLResponse=".count)) }
    }

    @Test("a forged response in report-only reaches the upstream encoded the cookbook's way, logged would_refuse and counted per MVPD and reason")
    func forgedForwarded() async throws {
        let log = CapturedLog()
        let echo = try await EchoUpstream.start()
        do {
            try await withHarness(upstreamURL: echo.url, gatewayLogger: log.logger, configure: { $0.mode = .reportOnly }) {
                (h: GatewayHarness) async throws in
                let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
                let reply = try await h.exchangeV1(GatewayHarness.base64(forged))
                #expect(reply.status == 200, "\(reply.body)")
                let forwarded = try #require(echo.requests.last { $0.target == "/api/v1/tokens/authn" })
                #expect(Self.samlValue(forwarded.body) == GatewayHarness.cookbook(forged))
                #expect(try await h.metric("samlgate_report_only_total{mvpd=\"\(GatewayHarness.mvpd)\",reason=\"key_not_trusted\"}") == 1)
                #expect(try await h.metric("samlgate_verification_failures_total{code=\"key_not_trusted\",mvpd=\"\(GatewayHarness.mvpd)\"}") == 1)
                #expect(try await h.metric("samlgate_exchanges_total{mvpd=\"\(GatewayHarness.mvpd)\",outcome=\"forwarded\"}") == 1)
                let line = try #require(log.lines.first { $0.message == "would_refuse" })
                #expect(line.metadata["code"] == "key_not_trusted" && line.metadata["mvpd"] == GatewayHarness.mvpd)
                #expect(!log.lines.contains { $0.metadata.values.contains { $0.contains("mallory") } })
                // A value that is no SAML form at all goes on as the client sent it.
                let mangled = "not*base64"
                let body = GatewayHarness.form(GatewayHarness.v1Fields(mangled))
                #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: body).status == 200)
                #expect(echo.requests.last?.body == body)
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(
                    metrics.contains("samlgate_report_only_total{mvpd=\"\(GatewayHarness.mvpd)\",reason=\"unrecognized_saml_form\"} 1"),
                    "\(metrics.split(separator: "\n").filter { $0.contains("report_only") })")
                // A request naming no MVPD of the store goes on too, counted under unknown.
                let unknown = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(forged), mvpd: "Nobody"))
                #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: unknown).status == 200)
                #expect(try await h.metric("samlgate_report_only_total{mvpd=\"unknown\",reason=\"unknown_mvpd\"}") == 1)
                let ready = try await h.send(.GET, "/readyz")
                #expect(ready.json?["mode"] as? String == "report-only" && ready.json?["reportOnly"] as? [String] == [GatewayHarness.mvpd])
            }
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
    }

    @Test("replays too: the second copy of a genuine response is forwarded and reported as replayed")
    func replayForwarded() async throws {
        try await EchoUpstream.withGateway(configure: { $0.mode = .reportOnly }) { (h: GatewayHarness, echo: EchoUpstream, _: Int) async throws in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 200)
            #expect(try await h.exchangeV1(saml).status == 200)
            #expect(echo.requests.filter { $0.target == "/api/v1/tokens/authn" }.count == 2)
            #expect(try await h.metric("samlgate_report_only_total{mvpd=\"\(GatewayHarness.mvpd)\",reason=\"replayed\"}") == 1)
        }
    }

    @Test("an MVPD's mode file overrides the gateway's mode, both ways; a mode file of another word stops the load")
    func perMVPDModeFile() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            #expect(try await h.exchangeV1(GatewayHarness.base64(forged)).status == 400)
            let mode = URL(fileURLWithPath: h.trustDirectory).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("mode")
            try "report-only\n".write(to: mode, atomically: true, encoding: .utf8)
            #expect(h.gateway.core.reloadTrustStore())
            #expect(try await h.exchangeV1(GatewayHarness.base64(forged)).status == 200)
            #expect(echo.requests.contains { $0.target == "/api/v1/tokens/authn" })
            #expect(try await h.send(.GET, "/readyz").json?["reportOnly"] as? [String] == [GatewayHarness.mvpd])
            try "audit".write(to: mode, atomically: true, encoding: .utf8)
            #expect(throws: TrustStoreError.self) { try TrustStore.load(directory: h.trustDirectory) }
            #expect(!h.gateway.core.reloadTrustStore())
        }
        try await EchoUpstream.withGateway(configure: { $0.mode = .reportOnly }) { (h: GatewayHarness, echo: EchoUpstream, _: Int) async throws in
            let mode = URL(fileURLWithPath: h.trustDirectory).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("mode")
            try "enforce".write(to: mode, atomically: true, encoding: .utf8)
            #expect(h.gateway.core.reloadTrustStore())
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            #expect(try await h.exchangeV1(GatewayHarness.base64(forged)).status == 400)
            #expect(try await h.send(.GET, "/readyz").json?["reportOnly"] as? [String] == [])
            // A field refused before the response is read is judged by the MVPD the body names;
            // a body naming none of the store's is refused while any MVPD is enforced: no
            // malformed request is a way past an enforced MVPD.
            var fields = GatewayHarness.v1Fields(GatewayHarness.base64(forged))
            fields[3] = ("deviceType", "Android")
            #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields)).status == 400)
            let unnamed = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(forged), mvpd: "cablevision"))
            #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: unnamed).status == 400)
            #expect(try await h.send(.POST, "/api/v1/tokens/authn", body: "mvpd=%zz&SAMLResponse=x").status == 400)
            #expect(!echo.requests.contains { $0.target == "/api/v1/tokens/authn" })
        }
    }
}
