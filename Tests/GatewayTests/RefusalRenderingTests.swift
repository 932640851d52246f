import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import ServerSupport
import Testing

/// How a refusal is written: `error-details` (whether samlgate's reason is told), `help-url`,
/// XML for REST API v1 clients that ask for it.
@Suite("Refusal rendering")
struct RefusalRenderingTests {
    @Test("error-details none: no details in the body; the reason still in the metrics")
    func detailsNone() async throws {
        try await withHarness(configure: { $0.errorDetails = .none }) { h in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            let reply = try await h.exchangeV1(GatewayHarness.base64(forged))
            #expect(reply.status == 400)
            #expect(reply.json?["code"] as? String == "invalid_parameter_saml_response")
            #expect(reply.json?["details"] == nil, "\(reply.body)")
            #expect(!reply.body.contains("key_not_trusted"))
            #expect(try await h.metric("samlgate_errors_total{code=\"key_not_trusted\"}") == 1)
        }
    }

    @Test("help-url: the backend's page by default, the operator's as given, none leaves it out")
    func helpURL() async throws {
        let missing = [("requestor", "REF"), ("deviceId", "d"), ("deviceType", "iOS"), ("SAMLResponse", "x")]
        try await withHarness { h in
            let reply = try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(missing))
            #expect(reply.json?["helpUrl"] as? String == EnhancedError.backendHelpURL)
        }
        try await withHarness(configure: { $0.helpURL = "https://help.example/errors" }) { h in
            let reply = try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(missing))
            #expect(reply.json?["helpUrl"] as? String == "https://help.example/errors")
        }
        try await withHarness(configure: { $0.helpURL = nil }) { h in
            let reply = try await h.send(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(missing))
            #expect(reply.json != nil && reply.json?["helpUrl"] == nil, "\(reply.body)")
        }
    }

    @Test("help-url and error-details settings: none, a URL, anything else refused at start-up")
    func settings() throws {
        var configuration = GatewayConfiguration()
        try configuration.apply(.helpURL, value: "none", source: "test")
        #expect(configuration.helpURL == nil)
        try configuration.apply(.helpURL, value: "https://help.example/x", source: "test")
        #expect(configuration.helpURL == "https://help.example/x")
        #expect(throws: ConfigurationError.self) { try configuration.apply(.helpURL, value: "javascript:alert(1)", source: "test") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.errorDetails, value: "verbose", source: "test") }
        try configuration.apply(.errorDetails, value: "NONE", source: "test")
        #expect(configuration.errorDetails == .none)
    }

    @Test("REST API v1 with Accept: application/xml gets the <error> element; v2 stays JSON")
    func xmlOnV1() async throws {
        try await withHarness { h in
            let fields = [("requestor", "REF"), ("deviceId", "d"), ("mvpd", "Nobody"), ("deviceType", "iOS"), ("SAMLResponse", "x")]
            let v1 = try await h.send(
                .POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields),
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/xml")])
            #expect(v1.status == 400)
            #expect(v1.headers.first(name: "Content-Type") == "application/xml")
            #expect(v1.body.contains("<code>unknown_integration</code>"), "\(v1.body)")
            #expect(v1.body.contains("<details>unknown_mvpd; parameter=mvpd</details>"), "\(v1.body)")
            #expect(v1.body.hasSuffix("</error>"))
            let v2 = try await h.exchangeV2("x", status: nil, extraHeaders: [("Accept", "application/xml")])
            #expect(v2.headers.first(name: "Content-Type") == "application/json")
            #expect(v2.json?["code"] as? String == "invalid_header_pfs_permission_access_not_present")
        }
    }
}
