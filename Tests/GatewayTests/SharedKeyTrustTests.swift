import CLITestSupport
import Foundation
import GatewayTestSupport
import TestIdP
import Testing

/// One IdP key trusted for two MVPDs, and assertions without an Issuer: a response is accepted
/// only as the MVPD its signed Issuer is bound to, and its replay record is the signer's, never
/// the MVPD the client names. Through `samlgate trust list`, `samlgate serve` and HTTP.
@Suite("Keys shared between MVPDs and issuer-less assertions", .serialized)
struct SharedKeyTrustTests {
    static let other = "OtherCable"

    /// Cablevision and OtherCable both trusting the harness IdP's key; `issuers` are written as
    /// their `issuer` files (`nil`: none).
    static func sharedStore(cablevision: String?, other otherIssuer: String?) throws -> String {
        let root = TestScratch.directory("samlgate-shared-key")
        for (mvpd, issuer) in [(GatewayHarness.mvpd, cablevision), (other, otherIssuer)] {
            let dir = root.appendingPathComponent(mvpd)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try GatewayHarness.idpPair.certificatePEM.write(to: dir.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
            if let issuer { try issuer.write(to: dir.appendingPathComponent("issuer"), atomically: true, encoding: .utf8) }
        }
        try GatewayHarness.platformMappingID.write(
            to: root.appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        return root.path
    }

    static let cablevisionIssuer = IdPMetadata.defaultEntityID(mvpd: GatewayHarness.mvpd)
    static let otherIssuer = IdPMetadata.defaultEntityID(mvpd: other)

    @Test("without an issuer file for each MVPD, trust list and serve refuse the store, naming the files")
    func unboundSharedKeyIsRefused() throws {
        let store = try Self.sharedStore(cablevision: Self.cablevisionIssuer, other: nil)
        defer { try? FileManager.default.removeItem(atPath: store) }
        let list = try SamlgateProcess.run(["trust", "list", store])
        #expect(list.status == 1)
        #expect(list.stderr.contains("trust_store_invalid"), "\(list.stderr)")
        #expect(list.stderr.contains("Cablevision/cert.pem") && list.stderr.contains("\(Self.other)/cert.pem"), "\(list.stderr)")
        #expect(list.stderr.contains("\(Self.other)/issuer") && !list.stderr.contains("Cablevision/issuer"), "\(list.stderr)")
        let serve = try SamlgateProcess.run(
            ["serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", store, "--log-format", "text"], timeout: 20)
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("has no issuer binding"), "\(serve.stderr)")
    }

    @Test("with an issuer file for each MVPD, trust list shows the key for both and a response is accepted only as its own MVPD")
    func boundSharedKeyKeepsMVPDsApart() async throws {
        let store = try Self.sharedStore(cablevision: Self.cablevisionIssuer, other: Self.otherIssuer)
        defer { try? FileManager.default.removeItem(atPath: store) }
        let list = try SamlgateProcess.run(["trust", "list", store])
        #expect(list.status == 0, "\(list.stderr)")
        let fingerprint = try #require(list.stdoutText.split(separator: "\n").dropFirst().first?.split(separator: " ").dropFirst(4).first)
        #expect(list.stdoutText.components(separatedBy: " \(fingerprint) ").count == 3, "\(list.stdoutText)")
        let json = try SamlgateProcess.run(["trust", "list", "--json", store])
        let mvpds = try #require((try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])?["mvpds"] as? [[String: Any]])
        let shared = mvpds.map { (($0["keys"] as? [[String: Any]])?.first?["sharedWith"] as? [String]) ?? [] }
        #expect(shared == [[Self.other], [GatewayHarness.mvpd]], "\(json.stdoutText)")
        try await withHarness(configure: { $0.trustStore = store }) { h in
            let forOther = GatewayHarness.issue { $0.mvpd = Self.other }
            let asCablevision = try await h.exchangeV1(GatewayHarness.base64(forOther))
            #expect(asCablevision.status == 400, "\(asCablevision.body)")
            #expect(asCablevision.reason == "issuer_mismatch")
            let own = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
            #expect(own.status == 204, "\(own.body)")
        }
    }

    @Test("one IdP bound to two MVPDs: the same assertion is accepted once, whichever MVPD the client names")
    func replayIsKeyedOnTheSigner() async throws {
        let store = try Self.sharedStore(cablevision: Self.cablevisionIssuer, other: Self.cablevisionIssuer)
        defer { try? FileManager.default.removeItem(atPath: store) }
        try await withHarness(configure: { $0.trustStore = store }) { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 204)
            let again = try await h.exchangeV1(saml, mvpd: Self.other)
            #expect(again.status == 400, "\(again.body)")
            #expect(again.reason == "replayed")
        }
    }

    @Test("an assertion without an Issuer is refused, with and without a configured issuer", arguments: [false, true])
    func issuerlessAssertionIsRefused(_ bound: Bool) async throws {
        let store = try Self.sharedStore(cablevision: bound ? Self.cablevisionIssuer : nil, other: nil)
        // Only Cablevision: OtherCable's entry would share the key unbound.
        try FileManager.default.removeItem(atPath: store + "/" + Self.other)
        defer { try? FileManager.default.removeItem(atPath: store) }
        try await withHarness(configure: { $0.trustStore = store }) { h in
            // No Issuer at all; or only the Response's, even when the Response is what is signed.
            for (sign, onlyAssertion) in [(SignTarget.assertion, false), (.both, false), (.response, true), (.both, true)] {
                let xml = GatewayHarness.issue {
                    $0.omitIssuer = !onlyAssertion
                    $0.omitAssertionIssuer = onlyAssertion
                    $0.sign = sign
                }
                let reply = try await h.exchangeV1(GatewayHarness.base64(xml))
                #expect(reply.status == 400, "\(reply.body)")
                #expect(reply.reason == "issuer_mismatch")
                #expect(reply.json?["code"] as? String == "invalid_parameter_saml_response")
            }
        }
    }
}
