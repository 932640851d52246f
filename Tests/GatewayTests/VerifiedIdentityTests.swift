import CLITestSupport
import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import TestIdP
import Testing

/// What the backend reads is what was verified, through real exchanges: a value the cookbook's
/// normalization would change, unsigned content a backend could read as identity, and a
/// canonicalization CPU bomb — each stopped before anything reaches the upstream.
@Suite("Gateway: the identity the backend reads is the one verified")
struct VerifiedIdentityTests {
    /// A response signed for `user` with line breaks in `SignedInfo`: the cookbook's
    /// normalization breaks its signature, so only the original verifies.
    static func lineBreakSigned(user: String) -> [UInt8] {
        GatewayHarness.issue {
            $0.user = user
            $0.signedInfoLineBreaks = true
        }
    }

    @Test(
        "a NameID the normalization would turn into another user's is refused, or forwarded unnormalized when preserving signatures",
        arguments: ["\u{2028}", "\u{2029}", "\u{85}", "\n", "\t"])
    func identityChangedByNormalization(_ folded: String) async throws {
        let xml = Self.lineBreakSigned(user: "vic\(folded)tim@example.com")
        try await EchoUpstream.withGateway { h, echo, _ in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 400, "\(reply.body)")
            #expect(reply.reason == "normalization_changes_document")
            #expect(echo.requests.isEmpty)
        }
        try await EchoUpstream.withGateway(configure: { $0.forwardForm = .signaturePreserving }) { h, echo, _ in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == 200, "\(reply.body)")
            let forwarded = try #require(echo.requests.first)
            // The original, byte for byte, base64- and percent-encoded without normalization.
            let expected = GatewayHarness.escapeFree(base64Percent: xml)
            #expect(forwarded.body.contains("SAMLResponse=\(expected)"))
        }
    }

    @Test(
        "unsigned content a backend could read as identity, processing instructions and XInclude never reach the upstream",
        arguments: [
            ("<saml:Subject><saml:NameID>victim@example.com</saml:NameID></saml:Subject>", 400, "unsigned_content"),
            ("<samlp:Extensions><saml:NameID>victim@example.com</saml:NameID></samlp:Extensions>", 400, "unsigned_content"),
            ("<?xml-stylesheet type=\"text/xsl\" href=\"http://attacker.example/x.xsl\"?>", 400, "forbidden_markup"),
            ("<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"file:///etc/passwd\" parse=\"text\"/>", 400, "forbidden_markup"),
        ])
    func unsignedEnvelope(_ insertion: String, _ status: Int, _ code: String) async throws {
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        let xml = Array(genuine.replacingFirst("</saml:Issuer>", with: "</saml:Issuer>" + insertion).utf8)
        try await EchoUpstream.withGateway { h, echo, _ in
            let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
            #expect(reply.status == status, "\(reply.body)")
            #expect(reply.reason == code)
            #expect(echo.requests.isEmpty)
            // The genuine response, sent after, is still accepted: nothing was recorded.
            #expect(try await h.exchangeV1(GatewayHarness.base64(Array(genuine.utf8))).status == 200)
        }
    }

    @Test("a NameID hidden in KeyInfo, which no digest covers, is refused")
    func nameIDInKeyInfo() async throws {
        let genuine = String(decoding: GatewayHarness.issue { $0.sign = .both }, as: UTF8.self)
        let xml = genuine.replacingFirst("</ds:KeyInfo>", with: "<saml:NameID>victim@example.com</saml:NameID></ds:KeyInfo>")
        try await EchoUpstream.withGateway { h, echo, _ in
            let reply = try await h.exchangeV1(GatewayHarness.base64(Array(xml.utf8)))
            #expect(reply.status == 400, "\(reply.body)")
            #expect(reply.reason == "unsigned_content")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("an InclusiveNamespaces PrefixList bomb is refused before canonicalization, and the gateway keeps serving")
    func prefixListBomb() async throws {
        // 20,000 prefixes over 28-deep chains: about a minute of CPU per request before the bound.
        let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
        let list = (0..<20_000).map { "q\($0)" }.joined(separator: " ")
        // One markup item per 32 bytes, the densest the markup limits let through.
        let chain = String(repeating: "<d>" + String(repeating: "a", count: 28), count: 28) + String(repeating: "</d>", count: 28)
        let xml = genuine.replacingFirst("PrefixList=\"xs\"", with: "PrefixList=\"\(list)\"")
            .replacingFirst("</saml:Assertion>", with: String(repeating: chain, count: 300) + "</saml:Assertion>")
        #expect(xml.utf8.count > 200_000)
        try await EchoUpstream.withGateway { h, echo, _ in
            for _ in 0..<3 {
                let reply = try await h.exchangeV1(GatewayHarness.base64(Array(xml.utf8)))
                #expect(reply.status == 400, "\(reply.body)")
                #expect(reply.reason == "too_many_namespaces")
            }
            #expect(echo.requests.isEmpty)
            #expect(try await h.exchangeV1(GatewayHarness.base64(genuine.utf8.map { $0 })).status == 200)
        }
    }
}
