import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import Testing

/// `X-Forwarded-*` through the real gateway: what a client claims is replaced unless the peer is
/// a trusted proxy; `Forwarded` never passes.
@Suite("Forwarded headers")
struct ForwardedHeaderTests {
    static let spoofed = [
        ("X-Forwarded-Host", "evil.example"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-For", "1.2.3.4"),
        ("Forwarded", "for=1.2.3.4;host=evil.example;proto=https"),
    ]

    /// The headers the reference upstream's echo route received for a pass-through request.
    static func forwarded(_ h: GatewayHarness, headers: [(String, String)]) async throws -> [String: String] {
        let reply = try await h.send(.GET, "/reference/echo/redirect-base", headers: headers)
        #expect(reply.status == 200)
        let seen = try #require(reply.headers.first(name: "X-Echo-Headers"))
        return try #require(try JSONSerialization.jsonObject(with: Data(seen.utf8)) as? [String: String])
    }

    static func authority(_ h: GatewayHarness) -> String {
        String(h.gatewayURL.dropFirst("http://".count))
    }

    @Test("without trusted proxies, spoofed X-Forwarded-Host/-Proto/-For and Forwarded are replaced by the gateway's own view")
    func replaced() async throws {
        try await withHarness { h in
            let seen = try await Self.forwarded(h, headers: Self.spoofed)
            #expect(seen["x-forwarded-host"] == Self.authority(h))
            #expect(seen["x-forwarded-proto"] == "http")
            #expect(seen["x-forwarded-for"] == "127.0.0.1")
            #expect(seen["forwarded"] == nil)
        }
    }

    @Test("a peer outside the trusted blocks is not believed")
    func untrustedPeer() async throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, ::1/128")
        try await withHarness(configure: { $0.trustedProxies = proxies }) { h in
            let seen = try await Self.forwarded(h, headers: Self.spoofed)
            #expect(seen["x-forwarded-host"] == Self.authority(h))
            #expect(seen["x-forwarded-proto"] == "http")
            #expect(seen["x-forwarded-for"] == "127.0.0.1")
        }
    }

    @Test("from a trusted proxy (127.0.0.0/8): X-Forwarded-Host/-Proto kept, the peer appended to X-Forwarded-For, Forwarded dropped")
    func trusted() async throws {
        let proxies = try TrustedProxies(parsing: "127.0.0.0/8")
        try await withHarness(configure: { $0.trustedProxies = proxies }) { h in
            let seen = try await Self.forwarded(h, headers: Self.spoofed)
            #expect(seen["x-forwarded-host"] == "evil.example")
            #expect(seen["x-forwarded-proto"] == "https")
            #expect(seen["x-forwarded-for"] == "1.2.3.4, 127.0.0.1")
            #expect(seen["forwarded"] == nil)
            // A trusted proxy that sends none gets the gateway's own.
            let bare = try await Self.forwarded(h, headers: [])
            #expect(bare["x-forwarded-host"] == Self.authority(h))
            #expect(bare["x-forwarded-proto"] == "http")
            #expect(bare["x-forwarded-for"] == "127.0.0.1")
        }
    }

    @Test("the token exchange forwards the same rewritten headers")
    func exchange() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let reply = try await h.send(
                .POST, "/api/v1/tokens/authn", body: body,
                headers: [("Content-Type", "application/x-www-form-urlencoded")] + Self.spoofed)
            #expect(reply.status == 200, "\(reply.body)")
            let seen = try #require(echo.requests.last)
            #expect(seen.header("x-forwarded-host") == [Self.authority(h)])
            #expect(seen.header("x-forwarded-proto") == ["http"])
            #expect(seen.header("x-forwarded-for") == ["127.0.0.1"])
            #expect(seen.header("forwarded").isEmpty)
        }
    }

    /// Client address, scheme, host and path claims some backend or framework reads.
    static let claims = [
        "Client-IP", "X-Cluster-Client-IP", "X-Forwarded-Ssl", "X-Forwarded-Scheme", "Front-End-Https", "X-Url-Scheme", "X-Original-Host",
        "X-Host", "X-Forwarded-Uri", "X-Original-URI", "X-Envoy-Original-Path", "CF-Connecting-IP", "Fastly-Client-IP", "True-Client-IP",
        "X-ProxyUser-Ip", "X-Originating-IP", "X-Remote-IP", "X-Remote-Addr", "X-Forwarded", "Forwarded-For", "X-Real-IP", "x-real-ip",
        "X-FORWARDED-PORT", "X-Forwarded-Prefix", "X-Forwarded-Server", "X-Client-IP", "CF-Connecting-IPv6", "X-Scheme", "X-Envoy-Internal",
        "X-Original-Forwarded-For", "WL-Proxy-Client-IP", "X-Arr-Ssl", "X-Remote-User",
    ]

    @Test("from an untrusted peer, every client address, scheme, host or path claim is dropped; from a trusted proxy they pass")
    func hopClaims() async throws {
        let headers = Self.claims.map { ($0, $0.lowercased().hasSuffix("ip") ? "10.9.8.7" : "https") }
        let others = [("X-Custom", "1"), ("X-Ipsum", "2"), ("X-Device-Info", "3"), ("X-Hostname", "4"), ("Client-Hints", "5")]
        for trusting in ["", "10.0.0.0/8", "127.0.0.0/8"] {
            let proxies = try TrustedProxies(parsing: trusting)
            try await EchoUpstream.withGateway(configure: { $0.trustedProxies = proxies }) { _, echo, port in
                let answer = try await RawHTTP.send(port: port, method: "GET", target: "/api/v1/config/REF", headers: headers + others)
                #expect(answer.status == 200, "\(answer.head)")
                let received = try #require(echo.requests.last)
                for (name, value) in headers where name != "x-real-ip" {
                    let passed = received.header(name)
                    if trusting == "127.0.0.0/8" {
                        #expect(!passed.isEmpty && passed.allSatisfy { $0 == value }, "\(name) from a trusted proxy: \(passed)")
                    } else {
                        #expect(passed.isEmpty, "\(name) passed from an untrusted peer (trusting \(trusting))")
                    }
                }
                for (name, value) in others { #expect(received.header(name) == [value], "\(name)") }
            }
        }
    }

    @Test("trusted-proxies from flag, environment and YAML list; a malformed block stops start-up naming it")
    func setting() throws {
        var configuration = GatewayConfiguration()
        try configuration.apply(yaml: "trusted-proxies:\n  - 10.0.0.0/8\n  - \"fd00::/8\"\n", path: "p.yaml")
        #expect(configuration.trustedProxies.count == 2)
        try configuration.apply(environment: ["SAMLGATE_TRUSTED_PROXIES": "127.0.0.1/32"])
        #expect(configuration.trustedProxies.count == 1)
        try configuration.apply(.trustedProxies, value: "", source: "--trusted-proxies")
        #expect(configuration.trustedProxies.isEmpty)
        do {
            try configuration.apply(yaml: "trusted-proxies: [10.0.0.0/8, 10.0.0.0/33]\n", path: "p.yaml")
            Issue.record("accepted a bad block")
        } catch {
            #expect(error.message.contains("p.yaml") && error.message.contains("\"10.0.0.0/33\""), "\(error.message)")
        }
    }
}
