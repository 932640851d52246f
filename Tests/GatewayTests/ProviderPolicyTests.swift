import CLITestSupport
import Foundation
import GatewayTestSupport
import SAMLVerification
import TestIdP
import Testing

/// An MVPD's own policy (its trust-store entry's `policy` file) over the gateway's settings,
/// through real HTTP: another audience, a wider skew, a shorter lifetime, SHA-1 — for that MVPD
/// only — and `samlgate trust list` showing it.
@Suite("Per-MVPD policy")
struct ProviderPolicyTests {
    /// Writes the harness MVPD's `policy` file and reloads the store.
    static func setPolicy(_ h: GatewayHarness, _ text: String) throws {
        let file = URL(fileURLWithPath: h.trustDirectory).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("policy")
        try text.write(to: file, atomically: true, encoding: .utf8)
        #expect(h.gateway.core.reloadTrustStore())
    }

    static func reason(_ reply: GatewayHarness.Reply) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])?["details"] as? String
    }

    @Test("audience, skew, max-assertion-lifetime and allow-sha1 apply to the MVPD whose policy sets them")
    func policyApplies() async throws {
        try await withHarness { h in
            let elsewhere = GatewayHarness.base64(GatewayHarness.issue { $0.audience = "https://elsewhere.example" })
            #expect(Self.reason(try await h.exchangeV1(elsewhere)) == "wrong_audience")
            let early = GatewayHarness.base64(GatewayHarness.issue { $0.now = Date().addingTimeInterval(600) })
            #expect(Self.reason(try await h.exchangeV1(early)) == "not_yet_valid")
            let sha1 = GatewayHarness.base64(
                GatewayHarness.issue {
                    $0.signatureAlgorithm = .rsaSHA1
                    $0.digestAlgorithm = .sha1
                })
            #expect(Self.reason(try await h.exchangeV1(sha1)) == "algorithm_not_allowed")

            try Self.setPolicy(
                h,
                """
                # this IdP's audience, its clock, its hash
                audience: https://elsewhere.example
                skew: 900
                allow-sha1: true
                """)
            #expect(try await h.exchangeV1(elsewhere).status == 204)
            // From now on this MVPD's responses name its own audience.
            let earlyHere = GatewayHarness.base64(
                GatewayHarness.issue {
                    $0.now = Date().addingTimeInterval(600)
                    $0.audience = "https://elsewhere.example"
                })
            let sha1Here = GatewayHarness.base64(
                GatewayHarness.issue {
                    $0.signatureAlgorithm = .rsaSHA1
                    $0.digestAlgorithm = .sha1
                    $0.audience = "https://elsewhere.example"
                })
            let earlyReply = try await h.exchangeV1(earlyHere)
            #expect(earlyReply.status == 204, "\(earlyReply.body)")
            let sha1Reply = try await h.exchangeV1(sha1Here)
            #expect(sha1Reply.status == 204, "\(sha1Reply.body)")
            // The default audience is now the wrong one for this MVPD.
            #expect(Self.reason(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))) == "wrong_audience")

            // Responses valid 300 s: refused under a 60 s lifetime, accepted under 600 s.
            try Self.setPolicy(h, "max-assertion-lifetime: 60")
            let reply = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
            #expect(reply.status == 400 && Self.reason(reply) == "validity_too_long", "\(reply.body)")
            try Self.setPolicy(h, "max-assertion-lifetime: 600")
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
        }
    }

    @Test("forward-form in the policy file: a SignedInfo with line breaks forwarded intact for that MVPD while the gateway's setting is cookbook")
    func forwardFormPerMVPD() async throws {
        let xml = GatewayHarness.issue { $0.signedInfoLineBreaks = true }
        let unnormalized = GatewayHarness.escapeFree(base64Percent: xml)
        #expect(unnormalized != GatewayHarness.cookbook(xml), "the fixture must be changed by normalization")
        try await withHarness { h in
            #expect(try await h.exchangeV1(GatewayHarness.base64(xml)).status == 204)
            #expect(h.upstream?.store.exchanges.last?.samlResponse == GatewayHarness.cookbook(xml))
            try Self.setPolicy(h, "forward-form: signature-preserving")
            let second = GatewayHarness.issue { $0.signedInfoLineBreaks = true }
            #expect(try await h.exchangeV1(GatewayHarness.base64(second)).status == 204)
            #expect(h.upstream?.store.exchanges.last?.samlResponse == GatewayHarness.escapeFree(base64Percent: second))
        }
    }

    @Test("a policy file with an unknown key or a bad value stops the load, naming the entry and the line")
    func badPolicyRefused() throws {
        let root = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = URL(fileURLWithPath: root).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("policy")
        for (text, expected) in [
            ("skew: 300\naudiance: x", "policy line 2: unknown key \"audiance\""), ("skew: forever", "skew must be seconds in 0...3600"),
            ("allow-sha1: yes", "allow-sha1 must be true or false"), ("forward-form: raw", "forward-form must be cookbook or signature-preserving"),
            ("max-assertion-lifetime: 0", "max-assertion-lifetime must be seconds"), ("audience", "expected key: value"),
        ] {
            try text.write(to: file, atomically: true, encoding: .utf8)
            #expect {
                try TrustStore.load(directory: root)
            } throws: { error in
                let message = (error as? TrustStoreError)?.message ?? ""
                return message.contains(GatewayHarness.mvpd) && message.contains(expected)
            }
        }
    }

    @Test("samlgate trust list shows each entry's mode and policy, in the table and as JSON")
    func trustListShowsPolicy() throws {
        let root = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = URL(fileURLWithPath: root).appendingPathComponent(GatewayHarness.mvpd)
        try "skew: 300\nforward-form: signature-preserving\n".write(to: dir.appendingPathComponent("policy"), atomically: true, encoding: .utf8)
        try "report-only\n".write(to: dir.appendingPathComponent("mode"), atomically: true, encoding: .utf8)
        let table = String(decoding: try SamlgateProcess.run(["trust", "list", root]).stdout, as: UTF8.self)
        #expect(table.contains("mode=report-only skew=300 forward-form=signature-preserving"), "\(table)")
        let json = try SamlgateProcess.run(["trust", "list", "--json", root])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let entry = try #require((object["mvpds"] as? [[String: Any]])?.first)
        #expect(entry["mode"] as? String == "report-only")
        let policy = try #require(entry["policy"] as? [String: Any])
        #expect(policy["skew"] as? Int == 300 && policy["forwardForm"] as? String == "signature-preserving")
        #expect(policy["audience"] is NSNull)
        // The effective policy: the entry's values over the gateway's settings, here the defaults…
        let effective = try #require(entry["effective"] as? [String: Any])
        #expect(effective["mode"] as? String == "report-only" && effective["skew"] as? Int == 300)
        #expect(effective["audience"] as? String == "https://saml.sp.auth.adobe.com" && effective["allowSHA1"] as? Bool == false)
        #expect(effective["forwardForm"] as? String == "signature-preserving" && effective["maxAssertionLifetime"] is NSNull)
        // …or those of serve's configuration file.
        let config = URL(fileURLWithPath: root).appendingPathComponent("serve.yaml")
        try "audience: https://sp.example\nallow-sha1: true\nskew: 30\n".write(to: config, atomically: true, encoding: .utf8)
        let configured = try SamlgateProcess.run(["trust", "list", "--json", "--config", config.path, root])
        let configuredObject = try #require(try JSONSerialization.jsonObject(with: configured.stdout) as? [String: Any])
        let configuredEntry = try #require((configuredObject["mvpds"] as? [[String: Any]])?.first)
        let merged = try #require(configuredEntry["effective"] as? [String: Any])
        #expect(merged["audience"] as? String == "https://sp.example" && merged["allowSHA1"] as? Bool == true && merged["skew"] as? Int == 300)
        let broken = try SamlgateProcess.run(["trust", "list", "--config", "/nonexistent/serve.yaml", root])
        #expect(broken.status == 2)
    }
}
