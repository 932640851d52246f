import CLITestSupport
import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import TestIdP
import Testing

/// The attacks that once got a forged identity to the backend, or cost a minute of CPU, each
/// through real requests: the backend receives exactly what the gateway verified, or nothing.
@Suite("Gateway security: what reaches the backend")
struct GatewaySecurityTests {
    /// An unsigned response for the harness's MVPD: if it ever reaches the upstream, the gateway
    /// was skipped.
    static let unsignedBody: String = {
        let xml = GatewayHarness.issue { $0.sign = .none }
        return GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(xml)))
    }()

    static let formHeaders = [("Content-Type", "application/x-www-form-urlencoded")]

    @Test(
        "other spellings of an exchange path are refused or verified, never passed through",
        arguments: [
            "/api/v1/tokens/authn#x", "/api/v2/REF/profiles/sso/apple#x", "/api/v1/tokens/authn.", "/api/v1/tokens/authn%2e",
            "/api/v1/tokens/authn%2E", "/api/v1/tokens/authn%20", "/api/v1/tokens/authn%09", "/api/v1/tokens/authn%0a",
            "/api/v1/tokens/authn%00", "/api/v1/tokens/%2561uthn", "/api/v1/tokens\\authn", "/api/v1/tokens%5cauthn",
            "/api/v1/tokens/authn%C0%AF", "/api/v1/tokens/%EF%BD%81uthn", "/api/v1/tokens/authn%E2%80%8B", "//api/v1/tokens/authn",
            "/api/v1/tokens/./authn", "/api/v1/x/../tokens/authn", "/api/v1/tokens/authn;x", "/api/v1/tokens/authn%3Bx",
            "/api/v1/tokens/authn%2F", "/api/v1/tokens/authn%", "/api/v1/tokens/authn%zz", "*",
            "/api/v1/tokens/authn..", "/api/v1/tokens/authn\t",
        ])
    func spellingsAreRefused(_ target: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let answer = try await RawHTTP.send(port: port, target: target, headers: Self.formHeaders, body: Self.unsignedBody)
            #expect(answer.status == 400, "\(target): \(answer.head)")
            // Refused by the gateway with its code (or by the HTTP parser before it).
            #expect(answer.reason == "invalid_request_target" || answer.reason == nil, "\(target): \(answer.body)")
            #expect(echo.requests.isEmpty, "\(target) reached the upstream")
        }
    }

    @Test(
        "case and escapes of allowed characters still reach the verifier",
        arguments: [
            "/API/v1/Tokens/AUTHN", "/api/v1/tokens/%61uthn", "/api/v1/tokens/authn/", "/api/v2/REF/profiles/sso/%61pple",
            "/api/v2/REF/Profiles/SSO/APPLE", "http://evil.example/api/v1/tokens/authn",
        ])
    func canonicalSpellingsAreVerified(_ target: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let headers =
                Self.formHeaders + [
                    ("Authorization", "Bearer token-1"), ("AP-Device-Identifier", "fingerprint d"),
                    ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus()),
                ]
            let answer = try await RawHTTP.send(port: port, target: target, headers: headers, body: Self.unsignedBody)
            #expect(answer.status == 400, "\(target): \(answer.body)")
            #expect(answer.reason == "signature_missing", "\(target): \(answer.body)")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("the upstream receives the canonical target, exactly")
    func canonicalTargetIsForwarded() async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            _ = try await RawHTTP.send(port: port, method: "GET", target: "/api/v1/config/%52E%46?deviceId=a%2Fb&x=%C3%A9")
            _ = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
            _ = try await RawHTTP.send(port: port, method: "GET", target: "/api/v1/tokens/authn?requestor=REF&deviceId=d")
            let targets = echo.requests.map(\.target)
            #expect(
                targets == [
                    "/api/v1/config/REF?deviceId=a%2Fb&x=%C3%A9", "/api/v1/tokens/authn",
                    "/api/v1/tokens/authn?requestor=REF&deviceId=d",
                ])
        }
    }

    @Test("headers that reroute a request in some frameworks never reach the upstream")
    func routeOverridesAreDropped() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let headers = [
                ("X-Original-URL", "/api/v1/tokens/authn"), ("X-Rewrite-URL", "/api/v1/tokens/authn"),
                ("X-HTTP-Method-Override", "POST"), ("X-Method-Override", "POST"), ("X-Real-IP", "10.9.8.7"),
            ]
            let answer = try await RawHTTP.send(port: port, method: "GET", target: "/api/v1/config/REF", headers: headers)
            #expect(answer.status == 200, "\(answer.head)")
            let received = try #require(echo.requests.last)
            for (name, _) in headers { #expect(received.header(name).isEmpty, "\(name) was forwarded") }
        }
    }

    @Test("the exchange routes take no query string: unverified parameters never ride along")
    func queryOnExchangeIsRefused() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let unsigned = GatewayHarness.base64(GatewayHarness.issue { $0.sign = .none })
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            for query in ["?SAMLResponse=\(GatewayHarness.escape(unsigned))&mvpd=Other&deviceId=victim", "?", "?a=b"] {
                let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn" + query, headers: Self.formHeaders, body: genuine)
                #expect(answer.status == 400 && answer.reason == "invalid_request_target", "\(query): \(answer.body)")
                // Admitted as an exchange, then refused: the backend's code for a SAMLResponse it
                // could not take. (A SAMLResponse in the query is refused with the target itself,
                // before any route, in the generic code.)
                if !query.contains("SAMLResponse") {
                    #expect(answer.body.contains(#""code":"invalid_parameter_saml_response""#), "\(query): \(answer.body)")
                }
            }
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("asterisk-form and requests the client library refuses are the client's fault: the upstream stays ready")
    func clientErrorsDoNotCostUpstreamHealth() async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            #expect(try await RawHTTP.send(port: port, method: "OPTIONS", target: "*").status == 400)
            #expect(try await RawHTTP.send(port: port, method: "GET", target: "*").reason == "invalid_request_target")
            let trace = try await RawHTTP.send(port: port, method: "TRACE", target: "/x", body: "abc")
            #expect(trace.status == 400 && trace.reason == "invalid_request", "\(trace.head)")
            // A broken chunked body: the client's stream fails, not the upstream.
            let chunked = try await RawHTTP.send(
                port: port,
                raw: Array(
                    "POST /reference/echo/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\naaaaa\r\nZZ\r\n".utf8))
            #expect(chunked.status == 400 && chunked.reason == "malformed_request", "\(chunked.head)")
            let ready = try await h.send(.GET, "/readyz")
            #expect(ready.status == 200, "\(ready.body)")
            #expect(echo.requests.allSatisfy { $0.method != "OPTIONS" })
            let metrics = try await h.send(.GET, "/metrics")
            #expect(!MetricSeriesTests.hasNonZero(metrics.body, "samlgate_upstream_errors_total"), "\(metrics.body)")
        }
    }

    @Test("methods the backend does not serve on an exchange path are refused, not forwarded")
    func otherMethodsOnExchangePaths() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for (method, target) in [
                ("PUT", "/api/v1/tokens/authn"), ("PATCH", "/api/v2/REF/profiles/sso/apple"), ("DELETE", "/api/v1/tokens/authn"),
            ] {
                let answer = try await RawHTTP.send(port: port, method: method, target: target, headers: Self.formHeaders, body: Self.unsignedBody)
                #expect(answer.status == 405 && answer.reason == "method_not_allowed", "\(method) \(target): \(answer.head)")
                #expect(answer.head.lowercased().contains("allow: "))
            }
            // The v1 path's GET is the backend's token check: passed through, but never with a body.
            let check = try await RawHTTP.send(
                port: port, method: "GET", target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: Self.unsignedBody)
            #expect(check.status == 400 && check.reason == "invalid_request", "\(check.head)")
            let lower = try await RawHTTP.send(
                port: port, method: "post", target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: Self.unsignedBody)
            #expect(lower.status >= 400 && lower.status < 500, "\(lower.head)")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("an exchange body is plain form data, given once: the backend cannot read it differently")
    func exchangeBodyShape() async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let twice = try await RawHTTP.send(
                port: port, target: "/api/v1/tokens/authn",
                headers: Self.formHeaders + [("Content-Type", "multipart/form-data; boundary=x")], body: genuine)
            #expect(twice.status == 400 && twice.reason == "unsupported_media_type", "\(twice.head)")
            let gzip = try await RawHTTP.send(
                port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders + [("Content-Encoding", "gzip")], body: genuine)
            #expect(gzip.status == 400 && gzip.reason == "unsupported_media_type", "\(gzip.head)")
            for (polluted, code) in [
                (genuine + "&samlresponse=x", "duplicate_parameter"), (genuine + "&SAML%52esponse=x", "duplicate_parameter"),
                ("a=b;SAMLResponse=x&" + genuine, "invalid_parameter_value"),
                (genuine + String(repeating: "&f=1", count: FormBody.maximumFields), "invalid_parameter_value"),
            ] {
                let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: polluted)
                #expect(answer.status == 400 && answer.reason == code, "\(answer.body)")
            }
            #expect(echo.requests.isEmpty)
            // A charset parameter is the client's; the upstream gets the gateway's own plain form type.
            let reply = try await h.send(
                .POST, "/api/v1/tokens/authn", body: genuine,
                headers: [("Content-Type", "application/x-www-form-urlencoded; charset=ISO-8859-1")])
            #expect(reply.status == 200, "\(reply.body)")
            #expect(echo.requests.last?.header("content-type") == ["application/x-www-form-urlencoded"])
        }
    }

    @Test("identity headers of the v2 exchange are given once")
    func duplicateV2Headers() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            let other = GatewayHarness.partnerStatus(provider: "other-mvpd")
            let reply = try await h.exchangeV2(saml, extraHeaders: [("AP-Partner-Framework-Status", other)])
            #expect(reply.status == 400 && reply.reason == "duplicate_header", "\(reply.body)")
            #expect(echo.requests.isEmpty)
        }
    }

    // MARK: normalization turning hidden text into markup

    static let forged: String = {
        let options = IssueOptions(mvpd: GatewayHarness.mvpd, user: "admin@victim.example")
        return try! GatewayHarness.attackerIdP.issueString(options).assertionElement
    }()

    /// The genuine response with a forged Assertion hidden in `open … close` before its own, or a
    /// second NameID hidden inside its signed Assertion.
    static func smuggled(_ variant: Int) -> [UInt8] {
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        let hidden: [(String, String)] = [("<!--x-\n->", "<!-\n-y-->"), ("<![CDATA[x]]\n>", "<![CDATA[y]]>"), ("<?x a?\n>", "<?y b?>")]
        if variant < hidden.count {
            let (open, close) = hidden[variant]
            return Array(genuine.replacingFirst("<saml:Assertion ", with: open + forged + close + "<saml:Assertion ").utf8)
        }
        let second = "<!--x-\n-><saml:NameID>admin@victim.example</saml:NameID><!-\n-y-->"
        return Array(genuine.replacingFirst("</saml:NameID>", with: "</saml:NameID>" + second).utf8)
    }

    @Test(
        "markup revealed by normalization: refused in cookbook form, the verified original forwarded otherwise",
        arguments: 0..<4)
    func markupOpeningVariants(_ variant: Int) async throws {
        let xml = Self.smuggled(variant)
        // A CDATA section in the unsigned envelope is text there, and no response needs a
        // processing instruction: both refused in either forward form, before normalization.
        let refusedOutright: [Int: (Int, String)] = [1: (400, "unsigned_content"), 2: (400, "forbidden_markup")]
        for form in [ForwardForm.cookbook, .signaturePreserving] {
            guard let (status, code) = refusedOutright[variant] else { break }
            try await withHarness(configure: { $0.forwardForm = form }) { h in
                let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
                #expect(reply.status == status && reply.reason == code, "\(reply.body)")
                #expect(h.upstream?.store.exchanges.isEmpty == true)
            }
        }
        guard refusedOutright[variant] == nil else { return }
        try await withHarness { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 400 && reply.reason == "normalization_changes_document", "\(reply.body)")
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
        try await withHarness(configure: { $0.forwardForm = .signaturePreserving }) { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 204, "\(reply.body)")
            // Exactly the verified bytes: the backend parses one Assertion, alice's.
            #expect(h.upstream?.store.exchanges.last?.samlResponse == GatewayHarness.escapeFree(base64Percent: xml))
            let check = try await h.send(.GET, "/reference/exchanges")
            #expect(!check.body.contains("admin@victim.example"))
        }
    }

    // MARK: cost

    @Test("a Reference applies at most two transforms: each one is a pass over the signed element")
    func repeatedTransforms() async throws {
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        let extra = String(repeating: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>", count: 300)
        let bomb = Array(genuine.replacingFirst("</ds:Transforms>", with: extra + "</ds:Transforms>").utf8)
        try await withHarness { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(bomb))
            #expect(reply.status == 400 && reply.reason == "algorithm_not_allowed", "\(reply.body)")
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
    }

    @Test("a declared encoding other than UTF-8 is refused: a backend honouring it would read other markup")
    func declaredEncoding() async throws {
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        #expect(genuine.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        try await withHarness { h in
            for encoding in ["UTF-7", "ISO-8859-1", "utf-16"] {
                let declared = Array(genuine.replacingFirst("encoding=\"UTF-8\"", with: "encoding='\(encoding)'").utf8)
                let reply = try await h.exchangeV1(GatewayHarness.base64(declared))
                #expect(reply.status == 400 && reply.reason == "malformed_xml", "\(encoding): \(reply.body)")
            }
            let lower = Array(genuine.replacingFirst("encoding=\"UTF-8\"", with: "encoding=\"utf-8\"").utf8)
            #expect(try await h.exchangeV1(GatewayHarness.base64(lower)).status == 204)
            #expect(h.upstream?.store.exchanges.count == 1)
        }
    }

    /// Markup in place of `<samlp:Status>` in a genuine response, and the code it must get.
    static let bombs: [(code: String, replacement: String)] = {
        let attributes: [String] = (0..<20_000).map { "a\($0)=\"\"" }
        let declarations: [String] = (0..<5_000).map { "xmlns:p\($0)=\"urn:x:\($0)\"" }
        let nested: String = "<x " + (0..<30).map { "xmlns:q\($0)=\"urn:q\"" }.joined(separator: " ") + ">"
        return [
            ("too_many_attributes", "<samlp:Status " + attributes.joined(separator: " ") + ">"),
            ("too_many_namespaces", "<samlp:Status " + declarations.joined(separator: " ") + ">"),
            ("too_many_namespaces", "<samlp:Status>" + String(repeating: nested, count: 40) + String(repeating: "</x>", count: 40)),
            // libxml2 goes on parsing after an error: a `<` inside an attribute value would start
            // a start tag the scanner did not count.
            ("malformed_xml", "<samlp:Status b='<c " + attributes.joined(separator: " ") + "'>"),
            ("malformed_xml", "<samlp:Status b='<c " + declarations.joined(separator: " ") + "'>"),
            ("too_many_nodes", "<samlp:Status>" + String(repeating: "<e/>", count: 30_000)),
            ("too_deep", "<samlp:Status>" + String(repeating: "<d>", count: 100) + String(repeating: "</d>", count: 100)),
        ]
    }()

    @Test("attribute and namespace bombs are refused before parsing", arguments: bombs.indices)
    func markupBombs(_ index: Int) async throws {
        let (code, replacement) = Self.bombs[index]
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        let bomb = Array(genuine.replacingFirst("<samlp:Status>", with: replacement).utf8)
        try await withHarness { h in
            let reply = try await h.exchangeV1(GatewayHarness.base64(bomb))
            #expect(reply.status == 400 && reply.reason == code, "\(reply.body.prefix(300))")
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
    }
}
