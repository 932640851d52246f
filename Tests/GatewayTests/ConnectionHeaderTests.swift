import Foundation
import GatewayTestSupport
import Testing

/// `Connection` naming a header the route needs end to end: the gateway would strip it as
/// hop-by-hop after verifying (and recording) the exchange, and the backend would refuse it,
/// spending the user's response. Refused before anything is verified or recorded.
@Suite("Connection naming an end-to-end header")
struct ConnectionHeaderTests {
    @Test(
        "v2 exchange: refused with invalid_request, nothing recorded; the same response is then exchanged once",
        arguments: [
            [("Connection", "Authorization")], [("Connection", "AP-Device-Identifier")], [("Connection", "ap-partner-framework-status")],
            [("Connection", "keep-alive, X-Device-Info")], [("Connection", "close ,  AUTHORIZATION ")], [("Connection", "Content-Type")],
            [("Connection", "keep-alive"), ("Connection", "Authorization")], [("Connection", ",Host,")],
        ])
    func v2(_ connection: [(String, String)]) async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            let refused = try await h.exchangeV2(saml, extraHeaders: connection)
            // Without its access token the backend would answer 401, and so does the gateway.
            let token = connection.contains { $0.1.lowercased().contains("authorization") }
            #expect(refused.status == (token ? 401 : 400) && refused.reason == "invalid_request", "\(connection): \(refused.body)")
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            // Nothing was recorded against replay: the response is still good, once.
            let clean = try await h.exchangeV2(saml)
            #expect(clean.status == 201, "\(clean.body)")
            let again = try await h.exchangeV2(saml)
            #expect(again.status == 400 && again.reason == "replayed", "\(again.body)")
        }
    }

    @Test("v1 exchange and the partner-status routes: refused the same way; other Connection options pass")
    func v1AndPartnerRoutes() async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let v1 = try await RawHTTP.send(
                port: port, target: "/api/v1/tokens/authn",
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Connection", "Content-Type")], body: body)
            #expect(v1.status == 400 && v1.reason == "invalid_request", "\(v1.body)")
            let status = GatewayHarness.partnerStatus()
            let profiles = try await RawHTTP.send(
                port: port, method: "GET", target: "/api/v2/REF/profiles",
                headers: [("AP-Partner-Framework-Status", status), ("Connection", "AP-Partner-Framework-Status")])
            #expect(profiles.status == 400 && profiles.reason == "invalid_request", "\(profiles.body)")
            #expect(echo.requests.isEmpty)
            // A hop-by-hop option of the client's own is still taken off, and the exchange goes on.
            let fine = try await h.send(
                .POST, "/api/v1/tokens/authn", body: body,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Connection", "X-Hop"), ("X-Hop", "1")])
            #expect(fine.status == 200, "\(fine.body)")
            #expect(echo.requests.last?.header("x-hop").isEmpty == true)
        }
    }
}
