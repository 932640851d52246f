import Foundation
import GatewayTestSupport
import Testing

/// Paths that backends with format or suffix matching (Rails' `authn.json`, Spring's suffix
/// patterns, `:` custom methods) route to the exchange's handler: verified as the exchange, or
/// refused — never passed through unverified.
@Suite("Exchange path look-alikes")
struct ExchangeLookalikeTests {
    /// `formHeaders` and `unsignedBody` are the security suite's.
    typealias Security = GatewaySecurityTests
    static let v2Headers =
        Security.formHeaders + [
            ("Authorization", "Bearer token-1"), ("AP-Device-Identifier", "fingerprint d"),
            ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus()),
        ]

    @Test(
        "a suffix on the v1 exchange path: verified as the exchange",
        arguments: [
            "/api/v1/tokens/authn.json", "/api/v1/tokens/authn%2Ejson", "/api/v1/tokens/authn%2ejson", "/api/v1/tokens/AUTHN.JSON",
            "/api/v1/tokens/authn.json/", "/api/v1/tokens/authn.xml", "/api/v1/tokens/authn~", "/api/v1/tokens/authn%7E",
            "/api/v1/tokens/authn:x", "/api/v1/tokens/authn%3Ax", "/api/v1/tokens/authn%3ax", "/API/V1/TOKENS/Authn:Exchange",
            "/api/v1/tokens/authn!", "/api/v1/tokens/authn%21", "/api/v1/tokens/authn@x", "/api/v1/tokens/authn,x",
            "/api/v1/tokens/authn+x", "/api/v1/tokens/authn=x", "/api/v1/tokens/authn$", "/api/v1/tokens/authn(x)",
            "/api/v1/tokens/authn'", "/api/v1/tokens/authn*", "/api/v1/tokens/authn&x", "/api/v1/tokens/authn%20x",
            "/api/v1/tokens/authn.json.x", "/api/v1/tokens/authn%5B%5D",
        ])
    func v1SuffixIsVerified(_ target: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let answer = try await RawHTTP.send(port: port, target: target, headers: Security.formHeaders, body: Security.unsignedBody)
            #expect(answer.status == 400 && answer.reason == "signature_missing", "\(target): \(answer.head) \(answer.body)")
            #expect(echo.requests.isEmpty, "\(target) reached the upstream")
        }
    }

    @Test(
        "more segments after an exchange path, or a look-alike of its segments: refused on every method",
        arguments: [
            "/api/v1/tokens/authn/x", "/api/v1/tokens/authn.json/x", "/api/v1/tokens/authn/x/", "/api/v2/REF/profiles/sso/apple/x",
            "/api/v2/REF/profiles/sso/apple/x/", "/API/V2/REF/PROFILES/SSO/apple/x", "/api/v2/REF/profiles/sso/apple/%78",
            "/api/v2/REF/profiles/sso.json/apple", "/api/v2/REF/profiles/sso~/apple", "/api/v2/REF/profiles/sso%3Ax/apple",
            "/api/v2/REF/profiles.json/sso/apple", "/api/v2/REF/profiles/sso/apple/sso/apple",
        ])
    func extraSegmentsAreRefused(_ target: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for method in ["POST", "GET", "PUT"] {
                let answer = try await RawHTTP.send(
                    port: port, method: method, target: target, headers: Self.v2Headers, body: method == "GET" ? "" : Security.unsignedBody)
                #expect(answer.status == 400 && answer.reason == "invalid_request_target", "\(method) \(target): \(answer.head) \(answer.body)")
            }
            #expect(echo.requests.isEmpty, "\(target) reached the upstream")
        }
    }

    @Test("a genuine exchange on a suffixed path is forwarded to exactly that target; GET there is the token check, without a body")
    func suffixedGenuineAndTokenCheck() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let reply = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn%2Ejson", headers: Security.formHeaders, body: genuine)
            #expect(reply.status == 200, "\(reply.body)")
            #expect(echo.requests.last?.target == "/api/v1/tokens/authn.json")
            let check = try await RawHTTP.send(port: port, method: "GET", target: "/api/v1/tokens/authn.json?requestor=REF&deviceId=d")
            #expect(check.status == 200, "\(check.body)")
            #expect(echo.requests.last?.target == "/api/v1/tokens/authn.json?requestor=REF&deviceId=d")
            let withBody = try await RawHTTP.send(
                port: port, method: "GET", target: "/api/v1/tokens/authn:x", headers: Security.formHeaders, body: Security.unsignedBody)
            #expect(withBody.status == 400 && withBody.reason == "invalid_request", "\(withBody.body)")
            let delete = try await RawHTTP.send(port: port, method: "DELETE", target: "/api/v1/tokens/authn.json")
            #expect(delete.status == 405 && delete.reason == "method_not_allowed", "\(delete.body)")
            #expect(echo.requests.count == 2)
        }
    }

    @Test("names that only begin like the exchange path's are other routes, passed through")
    func otherNamesPass() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for target in ["/api/v1/tokens/authnx", "/api/v1/tokens/authn-status", "/api/v1/tokens/authn_x", "/api/v2/REF/profiles/ssox/apple"] {
                let answer = try await RawHTTP.send(port: port, target: target, headers: Security.formHeaders, body: "a=b")
                #expect(answer.status == 200, "\(target): \(answer.body)")
                #expect(echo.requests.last?.target == target)
            }
        }
    }
}
