import CLITestSupport
import Foundation
import GatewayTestSupport
import TestIdP
import Testing

/// What the trust store refuses at load, and reports, about the keys themselves: weak keys
/// (RSA under 2048 bits, EC off P-256/384/521) unless `allow-weak-keys` admits them, the expiry
/// of certificates swift-certificates cannot parse, and the size of a linked `metadata.xml`.
/// Keys are made with the `openssl` command line, which makes what the test IdP will not.
@Suite("Trust store: weak keys, unreadable expiries, linked metadata", .serialized)
struct TrustStoreKeyStrengthTests {
    /// A self-signed certificate for `newkey` (`rsa:1024`, `ec`, …) with `options`, PEM.
    static func certificate(_ newkey: String, _ options: [String] = []) throws -> String {
        let dir = TestScratch.directory("samlgate-openssl")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments =
            ["req", "-x509", "-newkey", newkey] + options + [
                "-nodes", "-keyout", dir.path + "/key.pem", "-out", dir.path + "/cert.pem", "-days", "100", "-subj", "/CN=weak test IdP",
            ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try String(contentsOfFile: dir.path + "/cert.pem", encoding: .utf8)
    }

    /// A store with one MVPD (`Weak`) holding `pem`, and `allow-weak-keys` when `allow`.
    static func store(_ pem: String, allow: Bool) throws -> String {
        let root = TestScratch.directory("samlgate-weak-trust")
        let dir = root.appendingPathComponent("Weak")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try pem.write(to: dir.appendingPathComponent("idp.pem"), atomically: true, encoding: .utf8)
        if allow { try Data().write(to: dir.appendingPathComponent("allow-weak-keys")) }
        return root.path
    }

    static func json(_ result: SamlgateProcess) throws -> [String: Any] {
        let mvpds = try #require((try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])?["mvpds"] as? [[String: Any]])
        return try #require((mvpds.first?["keys"] as? [[String: Any]])?.first)
    }

    @Test(
        "a weak key is refused at load, naming the file; allow-weak-keys admits it, listed as weak_key and warned about at load",
        arguments: [("rsa:1024", [String](), "RSA-1024"), ("ec", ["-pkeyopt", "ec_paramgen_curve:secp256k1"], "EC secp256k1")])
    func weakKey(_ newkey: String, _ options: [String], _ weakness: String) throws {
        let pem = try Self.certificate(newkey, options)
        let refused = try Self.store(pem, allow: false)
        defer { try? FileManager.default.removeItem(atPath: refused) }
        let list = try SamlgateProcess.run(["trust", "list", refused])
        #expect(list.status == 1)
        #expect(list.stderr.contains("weak_key") && list.stderr.contains("Weak/idp.pem: \(weakness) key"), "\(list.stderr)")
        let serve = try SamlgateProcess.run(
            ["serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", refused, "--log-format", "text"], timeout: 20)
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("\(weakness) key"), "\(serve.stderr)")

        let allowed = try Self.store(pem, allow: true)
        defer { try? FileManager.default.removeItem(atPath: allowed) }
        let admitted = try SamlgateProcess.run(["trust", "list", "--json", allowed])
        #expect(admitted.status == 0, "\(admitted.stderr)")
        let key = try Self.json(admitted)
        #expect(key["status"] as? String == "weak_key")
        #expect(key["weakness"] as? String == weakness)
        // The expiry is read even where swift-certificates refuses the certificate.
        #expect(key["notAfter"] is String, "\(key)")
        let server = try CapturedServerProcess([
            "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", allowed, "--workers", "1", "--log-format", "json",
        ])
        _ = try #require(server.url, "start-up line: \(server.firstLine)")
        let (_, stderr, _) = server.finish()
        let warning = JSONLogLines.objects(stderr).first { $0["msg"] as? String == "weak key trusted because of allow-weak-keys" }
        #expect(warning?["weakness"] as? String == weakness && warning?["mvpd"] as? String == "Weak", "\(stderr)")
    }

    @Test("a weak certificate in metadata is weak_key, in metadata.xml and when fetched; allow-weak-keys admits it in both")
    func weakKeyInMetadata() async throws {
        let pem = try Self.certificate("rsa:1024")
        let root = TestScratch.directory("samlgate-weak-metadata")
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("Weak")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try IdPMetadata(entityID: "https://weak.example/idp", signingCertificates: [pem]).render()
            .write(to: dir.appendingPathComponent("metadata.xml"), atomically: true, encoding: .utf8)
        let refused = try SamlgateProcess.run(["trust", "list", root.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("weak_key") && refused.stderr.contains("RSA-1024 key"), "\(refused.stderr)")
        try Data().write(to: dir.appendingPathComponent("allow-weak-keys"))
        let admitted = try SamlgateProcess.run(["trust", "list", "--json", root.path])
        #expect(admitted.status == 0, "\(admitted.stderr)")
        #expect(try Self.json(admitted)["status"] as? String == "weak_key")

        let document = try IdPMetadata(
            entityID: RemoteMetadataTests.entityID, signingCertificates: [pem], validUntil: Date().addingTimeInterval(7 * 86_400)
        ).render(signedBy: RemoteMetadataTests.signer)
        let server = try await MetadataServer.start(document: document)
        defer { Task { await server.stop() } }
        for allow in [false, true] {
            let (store, cache) = try RemoteMetadataTests.store(url: server.url)
            defer {
                try? FileManager.default.removeItem(atPath: store)
                try? FileManager.default.removeItem(atPath: cache)
            }
            if allow { try Data().write(to: URL(fileURLWithPath: store + "/\(GatewayHarness.mvpd)/allow-weak-keys")) }
            try await withHarness(configure: {
                $0.trustStore = store
                $0.metadataCache = cache
            }) { h async throws in
                let updated = "samlgate_metadata_refresh_total{source=\"\(GatewayHarness.mvpd)\",result=\"updated\"}"
                if allow {
                    #expect(try await RemoteMetadataTests.eventually { try await h.metric(updated) >= 1 })
                } else {
                    #expect(try await RemoteMetadataTests.eventually { try await RemoteMetadataTests.failures(h, "invalid") >= 1 })
                    #expect(try await h.metric(updated) == 0)
                }
            }
        }
    }

    @Test("a DSA certificate's expiry is read with OpenSSL: listed and measured, not silently missing")
    func dsaExpiry() async throws {
        let pem = try Self.certificate("dsa:" + (try Self.dsaParameters()))
        let root = try Self.store(pem, allow: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let list = try SamlgateProcess.run(["trust", "list", "--json", root])
        #expect(list.status == 0, "\(list.stderr)")
        let key = try Self.json(list)
        #expect(key["notAfter"] is String, "\(key)")
        #expect(key["status"] as? String == "ok")
        try await withHarness(configure: { $0.trustStore = root }) { h in
            let metrics = try await h.send(.GET, "/metrics").body
            #expect(metrics.contains("samlgate_trust_certificate_expiry_seconds{mvpd=\"Weak\""), "\(metrics)")
            #expect(!metrics.contains("samlgate_trust_certificate_expiry_unreadable{"))
        }
    }

    /// DSA-2048 domain parameters in a scratch file (DSA keys need them first).
    static func dsaParameters() throws -> String {
        let path = TestScratch.directory("samlgate-dsa").path + "/dsa.pem"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dsaparam", "-out", path, "2048"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return path
    }

    @Test("an MVPD with more keys than the cap (a CA bundle linked in) is refused at load; the cap itself loads")
    func keyCap() throws {
        let pems = try (0..<17).map { _ in try IdPKeyPair.generate(.p256).certificatePEM }
        let capped = try Self.store(pems.prefix(16).joined(), allow: false)
        defer { try? FileManager.default.removeItem(atPath: capped) }
        #expect(try SamlgateProcess.run(["trust", "list", capped]).status == 0)
        let over = try Self.store(pems.joined(), allow: false)
        defer { try? FileManager.default.removeItem(atPath: over) }
        let list = try SamlgateProcess.run(["trust", "list", over])
        #expect(list.status == 1)
        #expect(list.stderr.contains("trust_store_invalid") && list.stderr.contains("Weak has 17 keys; at most 16"), "\(list.stderr)")
    }

    @Test("metadata.xml behind a symbolic link is measured at its target: over 1 MiB, or a device, is refused without reading it all")
    func linkedMetadataSize() throws {
        let root = TestScratch.directory("samlgate-linked-metadata")
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("Linked")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let big = root.appendingPathComponent("big.xml")
        let padding = String(repeating: " ", count: (1 << 20) + 10)
        try ("<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" entityID=\"https://x\">" + padding + "</md:EntityDescriptor>")
            .write(to: big, atomically: true, encoding: .utf8)
        for target in [big.path, "/dev/zero"] {
            try? FileManager.default.removeItem(at: dir.appendingPathComponent("metadata.xml"))
            try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("metadata.xml").path, withDestinationPath: target)
            let list = try SamlgateProcess.run(["trust", "list", root.path], timeout: 30)
            #expect(list.status == 1)
            #expect(
                list.stderr.contains("metadata_malformed") && list.stderr.contains("larger than the 1048576-byte metadata limit"), "\(list.stderr)")
        }
    }
}
