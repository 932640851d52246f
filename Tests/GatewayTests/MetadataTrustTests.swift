import CLITestSupport
import Foundation
import GatewayTestSupport
import SAMLVerification
import TestIdP
import Testing

/// The gateway and the command line on trust stores made of SAML metadata: the demo on a
/// metadata-only store, rotation through reloads without a restart, expired metadata (MVPD not
/// ready, `metadata_expired`), malformed metadata on reload, the rotation and expiry metrics,
/// the expiry warnings in the log, and `samlgate trust list`.
@Suite("Trust from SAML metadata", .serialized)
struct MetadataTrustTests {
    static let entityID = IdPMetadata.defaultEntityID(mvpd: GatewayHarness.mvpd)
    static let nextPair = try! IdPKeyPair.generate(.rsa2048, commonName: "harness IdP next key")
    static let nextIdP = try! TestIdentityProvider(keyPair: nextPair)

    /// `<tmp>/Cablevision/metadata.xml` (+ `platform-mapping-id`), no PEM file.
    static func metadataStore(_ pairs: [IdPKeyPair], validUntil: Date? = nil) throws -> String {
        let root = TestScratch.directory("samlgate-mdtrust")
        let dir = root.appendingPathComponent(GatewayHarness.mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try writeMetadata(pairs, validUntil: validUntil, root: root.path)
        try GatewayHarness.platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        return root.path
    }

    static func writeMetadata(_ pairs: [IdPKeyPair], validUntil: Date? = nil, root: String) throws {
        let metadata = IdPMetadata(entityID: entityID, signingCertificates: pairs.map(\.certificatePEM), validUntil: validUntil)
        try metadata.render().write(toFile: "\(root)/\(GatewayHarness.mvpd)/metadata.xml", atomically: true, encoding: .utf8)
    }

    static func signed(_ idp: TestIdentityProvider) -> String {
        var options = IssueOptions(mvpd: GatewayHarness.mvpd, user: "alice@example.com", attributes: [SAMLAttribute("zip", "10001")])
        options.issuer = nil
        return GatewayHarness.cookbook(try! idp.issue(options))
    }

    static func fingerprint(_ pair: IdPKeyPair) -> String {
        try! TrustedKey(pem: pair.certificatePEM).shortFingerprint
    }

    @Test("samlgate demo walks every flow and scenario through a gateway whose trust store is metadata only")
    func demo() async throws {
        let idp = TestScratch.directory("samlgate-mdidp").path
        defer { try? FileManager.default.removeItem(atPath: idp) }
        #expect(try SamlgateProcess.run(["idp", "keygen", "--out", idp]).status == 0)
        let metadata = try SamlgateProcess.run(["idp", "metadata", "--cert", idp + "/cert.pem", "--mvpd", GatewayHarness.mvpd])
        #expect(metadata.status == 0, "\(metadata.stderr)")
        let root = TestScratch.directory("samlgate-mddemo")
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent(GatewayHarness.mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try metadata.stdout.write(to: dir.appendingPathComponent("metadata.xml"))
        try GatewayHarness.platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["metadata.xml", "platform-mapping-id"])
        try await withHarness(configure: { $0.trustStore = root.path }) { harness in
            let url = harness.gatewayURL
            let result = try await Task.detached {
                try await SamlgateProcess.runOffPool(
                    ["demo", "--gateway", url, "--idp", idp, "--provider-id", GatewayHarness.platformMappingID], timeout: 120)
            }.value
            #expect(result.status == 0, "\(result.stdoutText)\n\(result.stderr)")
            #expect(result.stdoutText.contains("as the cookbook says"), "\(result.stdoutText)")
            #expect(result.stdoutText.contains("tokenSource=Apple"))
        }
    }

    @Test("rotation without restart: old + new key, then the old one removed; the key metric names the verifying key")
    func rotation() async throws {
        let root = try Self.metadataStore([GatewayHarness.idpPair])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let old = Self.fingerprint(GatewayHarness.idpPair), new = Self.fingerprint(Self.nextPair)
        try await withHarness(configure: { $0.trustStore = root }) { harness in
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            #expect(try await harness.exchangeV1(Self.signed(Self.nextIdP)).reason == "key_not_trusted")

            try Self.writeMetadata([GatewayHarness.idpPair, Self.nextPair], root: root)
            #expect(harness.gateway.core.reloadTrustStore())
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            #expect(try await harness.exchangeV1(Self.signed(Self.nextIdP)).status == 204)
            var metrics = try await harness.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_verifications_by_key_total{mvpd=\"Cablevision\",key=\"\(old)\"} 2"), "\(metrics)")
            #expect(metrics.contains("samlgate_verifications_by_key_total{mvpd=\"Cablevision\",key=\"\(new)\"} 1"))
            #expect(metrics.contains("samlgate_trust_certificate_expiry_seconds{mvpd=\"Cablevision\",key=\"\(old)\"}"))
            #expect(metrics.contains("samlgate_trust_certificate_expiry_seconds{mvpd=\"Cablevision\",key=\"\(new)\"}"))

            try Self.writeMetadata([Self.nextPair], root: root)
            #expect(harness.gateway.core.reloadTrustStore())
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).reason == "key_not_trusted")
            #expect(try await harness.exchangeV1(Self.signed(Self.nextIdP)).status == 204)
            metrics = try await harness.send(.GET, "/metrics").body
            #expect(
                !metrics.contains("samlgate_trust_certificate_expiry_seconds{mvpd=\"Cablevision\",key=\"\(old)\"}"),
                "a key rotated out is no longer reported")
            #expect(metrics.contains("samlgate_verifications_by_key_total{mvpd=\"Cablevision\",key=\"\(new)\"} 2"))
            // The seconds left on the new certificate: about ten years.
            let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("samlgate_trust_certificate_expiry_seconds{") })
            let seconds = try #require(Double(line.split(separator: " ").last ?? ""))
            #expect(seconds > 9 * 365 * 86_400 && seconds <= 10 * 365 * 86_400, "\(line)")
        }
    }

    @Test("malformed metadata on reload: the reload fails, the previous store keeps verifying")
    func malformedReload() async throws {
        let root = try Self.metadataStore([GatewayHarness.idpPair])
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await withHarness(configure: { $0.trustStore = root }) { harness in
            try "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\">"
                .write(toFile: "\(root)/\(GatewayHarness.mvpd)/metadata.xml", atomically: true, encoding: .utf8)
            #expect(!harness.gateway.core.reloadTrustStore())
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            let metrics = try await harness.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_trust_store_reloads_total{result=\"failed\"} 1"))
        }
    }

    @Test("expired metadata: the gateway starts, the MVPD is not ready, exchanges answer 503 metadata_expired until fresh metadata is loaded")
    func expired() async throws {
        let root = try Self.metadataStore([GatewayHarness.idpPair], validUntil: Date().addingTimeInterval(-1))
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await withHarness(configure: { $0.trustStore = root }) { harness in
            let ready = try await harness.send(.GET, "/readyz")
            #expect(ready.status == 503)
            #expect(ready.json?["mvpds"] as? Int == 1 && ready.json?["mvpdsReady"] as? Int == 0, "\(ready.body)")
            let refused = try await harness.exchangeV1(Self.signed(GatewayHarness.idp))
            #expect(refused.status == 503 && refused.reason == "metadata_expired", "\(refused.body)")
            var metrics = try await harness.send(.GET, "/metrics").body
            let line = try #require(
                metrics.split(separator: "\n").first { $0.hasPrefix("samlgate_trust_metadata_expiry_seconds{mvpd=\"Cablevision\"}") })
            #expect((Double(line.split(separator: " ").last ?? "") ?? 0) < 0, "\(line)")

            try Self.writeMetadata([GatewayHarness.idpPair], validUntil: Date().addingTimeInterval(7 * 86_400), root: root)
            #expect(harness.gateway.core.reloadTrustStore())
            #expect(try await harness.send(.GET, "/readyz").status == 200)
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            metrics = try await harness.send(.GET, "/metrics").body
            let fresh = try #require(
                metrics.split(separator: "\n").first { $0.hasPrefix("samlgate_trust_metadata_expiry_seconds{mvpd=\"Cablevision\"}") })
            let seconds = Double(fresh.split(separator: " ").last ?? "") ?? 0
            #expect(seconds > 6 * 86_400 && seconds <= 7 * 86_400, "\(fresh)")
        }
    }

    @Test("serve logs a warning for a certificate within 30 days of expiry and an error for expired metadata, without SAML content")
    func expiryLog() async throws {
        let short = try IdPKeyPair.generate(.rsa2048, commonName: "short-lived", validity: 10 * 86_400)
        let root = try Self.metadataStore([short])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let other = URL(fileURLWithPath: root).appendingPathComponent("Other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try IdPMetadata(
            entityID: "https://other.example/idp", signingCertificates: [GatewayHarness.idpPair.certificatePEM],
            validUntil: Date().addingTimeInterval(-60)
        ).render()
            .write(to: other.appendingPathComponent("metadata.xml"), atomically: true, encoding: .utf8)
        let server = try CapturedServerProcess([
            "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", root,
            "--workers", "1", "--log-format", "json",
        ])
        _ = try #require(server.url, "start-up line: \(server.firstLine)")
        let (_, stderr, status) = server.finish()
        #expect(status == 0)
        let lines = JSONLogLines.objects(stderr)
        let warning = try #require(lines.first { $0["msg"] as? String == "trusted certificate expires within 30 days" }, "\(stderr)")
        #expect(warning["level"] as? String == "warning")
        #expect(warning["mvpd"] as? String == "Cablevision" && warning["key"] as? String == Self.fingerprint(short), "\(warning)")
        let notReady = try #require(lines.first { $0["msg"] as? String == "MVPD not ready: its metadata has expired" }, "\(stderr)")
        #expect(notReady["mvpd"] as? String == "Other" && notReady["code"] as? String == "metadata_expired")
        #expect(!stderr.contains("BEGIN CERTIFICATE") && !stderr.contains("X509Certificate"))
    }

    @Test("samlgate trust list: a table or JSON per MVPD; exit 1 when an MVPD is not ready or the store does not load")
    func trustList() throws {
        let root = try Self.metadataStore([GatewayHarness.idpPair, Self.nextPair])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let pemOnly = URL(fileURLWithPath: root).appendingPathComponent("PemOnly")
        try FileManager.default.createDirectory(at: pemOnly, withIntermediateDirectories: true)
        // A key of its own: one shared with Cablevision would need an issuer file in PemOnly.
        let pemOnlyPair = try IdPKeyPair.generate(.p256, commonName: "pem-only IdP")
        try pemOnlyPair.certificatePEM.write(to: pemOnly.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)

        let table = try SamlgateProcess.run(["trust", "list", root])
        #expect(table.status == 0, "\(table.stderr)")
        let rows = table.stdoutText.split(separator: "\n")
        #expect(rows.count == 4, "\(table.stdoutText)")
        #expect(rows[0].hasPrefix("MVPD"))
        #expect(
            rows[1].hasPrefix("Cablevision") && rows[1].contains(Self.entityID) && rows[1].contains(Self.fingerprint(GatewayHarness.idpPair))
                && rows[1].contains("RSA") && rows[1].contains("ready") && rows[1].contains("Cablevision/metadata.xml"), "\(rows[1])")
        #expect(rows[3].hasPrefix("PemOnly") && rows[3].contains("PemOnly/cert.pem"), "\(rows[3])")

        let json = try SamlgateProcess.run(["trust", "list", "--json", root])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let mvpds = try #require(object["mvpds"] as? [[String: Any]])
        #expect(mvpds.map { $0["mvpd"] as? String } == ["Cablevision", "PemOnly"])
        #expect(mvpds[0]["issuer"] as? String == Self.entityID && mvpds[0]["source"] as? String == "metadata")
        #expect(mvpds[0]["platformMappingId"] as? String == GatewayHarness.platformMappingID)
        let keys = try #require(mvpds[0]["keys"] as? [[String: Any]])
        #expect(keys.count == 2)
        #expect(keys[1]["fingerprint"] as? String == (try TrustedKey(pem: Self.nextPair.certificatePEM)).fingerprint)
        #expect(keys[1]["status"] as? String == "ok" && keys[1]["algorithm"] as? String == "RSA" && keys[1]["notAfter"] is String)
        #expect(mvpds[1]["issuer"] is NSNull && mvpds[1]["source"] as? String == "pem")

        // Expired metadata: listed, not ready, exit 1.
        try Self.writeMetadata([GatewayHarness.idpPair], validUntil: Date().addingTimeInterval(-60), root: root)
        let expired = try SamlgateProcess.run(["trust", "list", "--json", root])
        #expect(expired.status == 1)
        let expiredObject = try #require(try JSONSerialization.jsonObject(with: expired.stdout) as? [String: Any])
        #expect((expiredObject["mvpds"] as? [[String: Any]])?.first?["status"] as? String == "metadata_expired")

        // A store that does not load: the CLI's error contract, exit 1.
        try "<x/>".write(toFile: "\(root)/Cablevision/metadata.xml", atomically: true, encoding: .utf8)
        let broken = try SamlgateProcess.run(["trust", "list", root])
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("samlgate: \(root): metadata_malformed: Cablevision/metadata.xml: "), "\(broken.stderr)")
        #expect(try SamlgateProcess.run(["trust", "list"]).status == 2, "no directory and no SAMLGATE_TRUST_STORE")
    }

    @Test("samlgate verify and batch --verify accept a metadata trust store: Issuer from the entityID, metadata_expired once validUntil has passed")
    func verifyCommand() throws {
        let root = try Self.metadataStore([GatewayHarness.idpPair])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let response = try SamlgateProcess.temporaryFile(
            "md-response.xml",
            Data(
                try GatewayHarness.idp.issue(
                    IssueOptions(mvpd: GatewayHarness.mvpd, user: "alice@example.com"))))
        let ok = try SamlgateProcess.run(["verify", "--trust-store", root, "--mvpd", GatewayHarness.mvpd, response])
        #expect(ok.status == 0, "\(ok.stdoutText) \(ok.stderr)")
        #expect(ok.stdoutText.contains("\"issuer\":\"\(Self.entityID)\""))
        let batch = try SamlgateProcess.run(["batch", response, "--verify", "--trust-store", root, "--mvpd", GatewayHarness.mvpd])
        #expect(batch.status == 0 && batch.stdoutText.contains("\"valid\":true"), "\(batch.stdoutText) \(batch.stderr)")
        try Self.writeMetadata([GatewayHarness.idpPair], validUntil: Date().addingTimeInterval(-60), root: root)
        let expired = try SamlgateProcess.run(["verify", "--trust-store", root, "--mvpd", GatewayHarness.mvpd, response])
        #expect(expired.status == 1)
        #expect(expired.stdoutText.contains("\"code\":\"metadata_expired\""), "\(expired.stdoutText)")
        let expiredBatch = try SamlgateProcess.run(["batch", response, "--verify", "--trust-store", root, "--mvpd", GatewayHarness.mvpd])
        #expect(expiredBatch.stdoutText.contains("metadata_expired"), "\(expiredBatch.stdoutText)")
        try "not metadata".write(toFile: "\(root)/Cablevision/metadata.xml", atomically: true, encoding: .utf8)
        let broken = try SamlgateProcess.run(["verify", "--trust-store", root, "--mvpd", GatewayHarness.mvpd, response])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("metadata_malformed"), "\(broken.stderr)")
    }

    @Test("samlgate idp metadata --signer-key/--signer-cert: metadata a store pinning that signer loads, and one pinning another refuses")
    func signedByCLI() throws {
        let base = TestScratch.directory("samlgate-mdsign").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        for name in ["idp", "signer", "other"] {
            #expect(try SamlgateProcess.run(["idp", "keygen", "--out", "\(base)/\(name)"]).status == 0)
        }
        let signed = try SamlgateProcess.run([
            "idp", "metadata", "--cert", "\(base)/idp/cert.pem", "--mvpd", GatewayHarness.mvpd,
            "--signer-key", "\(base)/signer/key.pem", "--signer-cert", "\(base)/signer/cert.pem",
        ])
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdoutText.contains("<ds:SignatureValue>"))
        let dir = "\(base)/trust/\(GatewayHarness.mvpd)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try signed.stdout.write(to: URL(fileURLWithPath: dir + "/metadata.xml"))
        try FileManager.default.copyItem(atPath: "\(base)/signer/cert.pem", toPath: dir + "/metadata-signer.pem")
        let listed = try SamlgateProcess.run(["trust", "list", "--json", "\(base)/trust"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdoutText.components(separatedBy: "\"fingerprint\"").count == 2, "the signer is not an IdP key: \(listed.stdoutText)")
        try FileManager.default.removeItem(atPath: dir + "/metadata-signer.pem")
        try FileManager.default.copyItem(atPath: "\(base)/other/cert.pem", toPath: dir + "/metadata-signer.pem")
        let refused = try SamlgateProcess.run(["trust", "list", "\(base)/trust"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("metadata_signature_invalid: Cablevision/metadata.xml: key_not_trusted"), "\(refused.stderr)")
        #expect(
            try SamlgateProcess.run(["idp", "metadata", "--cert", "\(base)/idp/cert.pem", "--mvpd", "X", "--signer-key", "\(base)/signer/key.pem"])
                .status == 2)
    }
}
