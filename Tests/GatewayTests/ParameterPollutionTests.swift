import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import Testing

/// Field names that some form parser reads as a field the gateway verified: PHP trims leading
/// blanks, reads `name[]` and keeps the last copy, others fold case or decode once more. Refused
/// in the body of an exchange (`duplicate_parameter`) and, for `SAMLResponse`, in any query.
@Suite("Parameter names: pollution by other spellings")
struct ParameterPollutionTests {
    static let formHeaders = [("Content-Type", "application/x-www-form-urlencoded")]
    static let unsigned = GatewayHarness.escape(GatewayHarness.base64(GatewayHarness.issue { $0.sign = .none }))

    /// Encoded spellings that read as `SAMLResponse` to some parser.
    static let samlSpellings = [
        "+SAMLResponse", "%20SAMLResponse", "SAMLResponse+", "SAMLResponse%20", "%09SAMLResponse", "SAMLResponse%0A", "samlresponse",
        "SAMLRESPONSE", "SAMLResponse[]", "SAMLResponse%5B%5D", "SAMLResponse[0]", "SAMLResponse[x", "SAMLResponse%00", "SAMLResponse%00x",
        "%C2%A0SAMLResponse", "%EF%BB%BFSAMLResponse", "SAMLResponse%E2%80%8B", "%C5%BFAMLResponse", "SAMLRe%C5%BFponse",
        "SAMLRespons%EF%BD%85", "SAML%52esponse", "%2BSAMLResponse", "%00SAMLResponse", "%00%00+SAMLResponse", "+%00SAMLResponse",
    ]

    /// Encoded spellings that read as `mvpd` (and the other fields the gateway reads).
    static let otherSpellings = [
        "+mvpd", "mvpd[]", "MVPD", "%20mvpd%20", "deviceId[]", "+requestor", "deviceid", "DeviceType%00", "appId[]", "+%00mvpd", "%00requestor",
    ]

    @Test(
        "v1: a second SAMLResponse or mvpd in any spelling is refused before verification, nothing forwarded",
        arguments: samlSpellings + otherSpellings)
    func v1(_ spelling: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            for body in [genuine + "&\(spelling)=\(Self.unsigned)", "\(spelling)=Other&" + genuine] {
                let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: body)
                #expect(answer.status == 400 && answer.reason == "duplicate_parameter", "\(spelling): \(answer.body)")
            }
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("the reported case: the genuine SAMLResponse with +SAMLResponse and +mvpd of another")
    func reported() async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let body = genuine + "&+SAMLResponse=\(Self.unsigned)&+mvpd=Other"
            let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: body)
            #expect(answer.status == 400 && answer.reason == "duplicate_parameter", "\(answer.body)")
            let details = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["details"] as? String
            #expect(details?.contains("parameter=SAMLResponse") == true)
            #expect(answer.code == "invalid_parameter_saml_response")
            // v2: the body's only field the gateway reads is SAMLResponse.
            let saml = GatewayHarness.escape(GatewayHarness.base64(GatewayHarness.issue()))
            let v2 = try await h.send(
                .POST, "/api/v2/REF/profiles/sso/apple", body: "SAMLResponse=\(saml)&+SAMLResponse=\(Self.unsigned)",
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Bearer token-1"),
                    ("AP-Device-Identifier", "fingerprint d"), ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus()),
                ])
            #expect(v2.status == 400 && v2.reason == "duplicate_parameter", "\(v2.body)")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("an escaped &, ; or = in a field name is refused: parsers that decode before they split would read another field")
    func escapedSeparatorsInNames() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            for name in ["x%26SAMLResponse", "x%3BSAMLResponse", "SAMLResponse%3Dx", "x%26mvpd"] {
                let body = genuine + "&\(name)=\(Self.unsigned)"
                let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: body)
                #expect(answer.status == 400 && answer.reason == "invalid_parameter_value", "\(name): \(answer.body)")
            }
            #expect(echo.requests.isEmpty)
        }
    }

    @Test(
        "a control or non-ASCII character anywhere in a field name is refused: parsers differ on NUL, full case folding and NFKC",
        arguments: [
            "a%00SAMLResponse", "SAML%00Response", "x%01", "x%1F", "x%7F", "%7Fx", "%00", "reque%EF%AC%86or", "reque%EF%AC%85or",
            "%F0%9D%90%92AMLResponse", "devi%C3%A7eId", "%E2%93%88AMLResponse", "x%C3%A9",
        ])
    func controlAndNonASCIINames(_ name: String) async throws {
        try await EchoUpstream.withGateway { h, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            for body in [genuine + "&\(name)=Other", "\(name)=Other&" + genuine] {
                let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: body)
                #expect(answer.status == 400 && answer.reason == "invalid_parameter_value", "\(name): \(answer.body)")
            }
            let saml = GatewayHarness.escape(GatewayHarness.base64(GatewayHarness.issue()))
            let v2 = try await h.send(
                .POST, "/api/v2/REF/profiles/sso/apple", body: "SAMLResponse=\(saml)&\(name)=\(Self.unsigned)",
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Bearer token-1"),
                    ("AP-Device-Identifier", "fingerprint d"), ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus()),
                ])
            #expect(v2.status == 400 && v2.reason == "invalid_parameter_value", "\(name): \(v2.body)")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("the query refuses the same control characters in a name as the body")
    func queryControlNames() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for target in ["/api/v1/config/REF?%00SAMLResponse=x", "/api/v1/config/REF?+%00mvpd=x", "/x?a%01=1", "/x?a%7F=1"] {
                let answer = try await RawHTTP.send(port: port, method: "GET", target: target)
                #expect(answer.status == 400 && answer.reason == "invalid_request_target", "\(target): \(answer.body)")
            }
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("names that only resemble a field pass, byte for byte; a 1 MiB name of blanks costs one pass")
    func lookalikeNamesPass() async throws {
        try await EchoUpstream.withGateway(configure: { $0.bodyLimit = 2 << 20 }) { _, echo, port in
            let genuine = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let extra = "&SAMLResponseType=1&mvpdx=2&x_mvpd=3&SAML_Response=4&device.Id=5&a=SAMLResponse"
            let answer = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: genuine + extra)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(echo.requests.last?.body.hasSuffix(extra) == true)
            let blanks = String(repeating: "+", count: 1 << 20) + "mvpd=Other&" + genuine
            let big = try await RawHTTP.send(port: port, target: "/api/v1/tokens/authn", headers: Self.formHeaders, body: blanks)
            #expect(big.status == 400 && big.reason == "duplicate_parameter", "\(big.body.prefix(300))")
            #expect(echo.requests.count == 1)
        }
    }

    @Test(
        "a SAMLResponse in a query is refused on every route, in every spelling",
        arguments: [
            "/api/v1/tokens/authn?requestor=REF&SAMLResponse=x", "/api/v1/tokens/authn?SAMLResponse", "/api/v1/config/REF?SAMLResponse=x",
            "/x?a=1;SAMLResponse=x", "/x?a=1&&SAMLResponse=", "/api/v2/REF/profiles?SAMLResponse=x",
            // Parsers that decode before they split.
            "/x?a=%26SAMLResponse%3Dx", "/x?a%3B%20samlresponse=1",
        ] + samlSpellings.filter { !$0.contains("%00") && !$0.contains("%0A") && !$0.contains("%09") }.map { "/api/v1/tokens/authn?\($0)=x" })
    func query(_ target: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let answer = try await RawHTTP.send(port: port, method: "GET", target: target)
            #expect(answer.status == 400 && answer.reason == "invalid_request_target", "\(target): \(answer.body)")
            #expect(echo.requests.isEmpty, "\(target) reached the upstream")
        }
    }

    @Test("other query parameters, and SAMLResponse as a value, still pass")
    func queryPasses() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for target in ["/api/v1/tokens/authn?requestor=REF&deviceId=d", "/x?SAMLResponseType=1&q=SAMLResponse", "/x?SAML_Response=1"] {
                let answer = try await RawHTTP.send(port: port, method: "GET", target: target)
                #expect(answer.status == 200, "\(target): \(answer.body)")
                #expect(echo.requests.last?.target == target)
            }
        }
    }
}
