import Foundation
import Gateway
import GatewayTestSupport
import ServerSupport
import Testing

/// Request headers whose names hold `_`: Rack, WSGI, CGI and Symfony read `X_Forwarded_For` as
/// `X-Forwarded-For` (some CGI environments `X.Forwarded.For` too), so such a header would carry
/// a claim past every check made on the real name. Dropped on every route; `_` is kept with
/// `allow-underscore-headers`.
@Suite("Header names with underscores and other characters")
struct UnderscoreHeaderTests {
    static let underscored = [
        ("X_Forwarded_For", "10.9.8.7"), ("x_real_ip", "10.9.8.7"), ("X_Original_URL", "/api/v1/tokens/authn"),
        ("X_HTTP_Method_Override", "POST"), ("AP_Partner_Framework_Status", GatewayHarness.partnerStatus(provider: "other-mvpd")),
        ("X-Forwarded_Host", "evil.example"), ("_Authorization", "Bearer stolen"), ("Custom_Header", "1"),
        ("X.Forwarded.For", "10.9.8.7"), ("AP.Partner~Framework!Status", "x"), ("X-Custom.Header", "1"),
    ]

    /// The received names with anything but letters, digits and `-`.
    static func underscoredNames(_ received: EchoUpstream.Received) -> [String] {
        received.headers.map(\.0).filter { !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }
    }

    @Test("dropped from a pass-through and counted; the gateway's own X-Forwarded-For stands")
    func passThrough() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let reply = try await h.send(.GET, "/api/v1/config/REF", headers: Self.underscored)
            #expect(reply.status == 200, "\(reply.body)")
            let received = try #require(echo.requests.last)
            #expect(Self.underscoredNames(received).isEmpty, "\(received.headers)")
            #expect(received.header("x-forwarded-for") == ["127.0.0.1"])
            #expect(received.header("x-forwarded-host") != ["evil.example"])
            let metrics = try await h.send(.GET, "/metrics")
            #expect(metrics.body.contains("samlgate_dropped_header_names_total \(Self.underscored.count)"), "\(metrics.body)")
        }
    }

    @Test("dropped from both exchanges: a v2 exchange verified for one MVPD never carries a partner status naming another")
    func exchanges() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let v1 = try await h.send(
                .POST, "/api/v1/tokens/authn", body: GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue()))),
                headers: [("Content-Type", "application/x-www-form-urlencoded")] + Self.underscored)
            #expect(v1.status == 200, "\(v1.body)")
            #expect(Self.underscoredNames(try #require(echo.requests.last)).isEmpty)
            let status = GatewayHarness.partnerStatus()
            let v2 = try await h.exchangeV2(GatewayHarness.base64(GatewayHarness.issue()), status: status, extraHeaders: Self.underscored)
            #expect(v2.status == 200, "\(v2.body)")
            let received = try #require(echo.requests.last)
            #expect(received.target == "/api/v2/REF/profiles/sso/apple")
            #expect(Self.underscoredNames(received).isEmpty, "\(received.headers)")
            #expect(received.header("ap-partner-framework-status") == [status])
        }
    }

    @Test("with allow-underscore-headers: `_` forwarded, except in names that read as a header the gateway checks or sets")
    func allowed() async throws {
        try await EchoUpstream.withGateway(configure: { $0.allowUnderscoreHeaders = true }) { h, echo, _ in
            let reply = try await h.send(.GET, "/api/v1/config/REF", headers: Self.underscored)
            #expect(reply.status == 200, "\(reply.body)")
            let received = try #require(echo.requests.last)
            // `_Authorization` reads as no header the gateway knows (`-authorization`); `.` is never forwarded.
            #expect(Self.underscoredNames(received) == ["_Authorization", "Custom_Header"], "\(received.headers)")
            #expect(received.header("x-forwarded-for") == ["127.0.0.1"])
        }
    }

    @Test("allow-underscore-headers from flag value, environment and YAML; anything but a boolean stops start-up")
    func setting() throws {
        var configuration = GatewayConfiguration()
        #expect(!configuration.allowUnderscoreHeaders)
        try configuration.apply(yaml: "allow-underscore-headers: true\n", path: "p.yaml")
        #expect(configuration.allowUnderscoreHeaders)
        try configuration.apply(environment: ["SAMLGATE_ALLOW_UNDERSCORE_HEADERS": "off"])
        #expect(!configuration.allowUnderscoreHeaders)
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(.allowUnderscoreHeaders, value: "sometimes", source: "--allow-underscore-headers")
        }
    }
}
