import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import SAMLVerification
import TestIdP
import Testing

/// Metadata the gateway fetches itself (`metadata.url`): the first fetch, rotation by refresh
/// without a restart, conditional GETs, the last good copy kept through every kind of failure,
/// start-up from the cache with the source down, an MVPD whose metadata never arrived, the
/// aggregate, the refresh metrics, and the trust store's refusals of unsafe sources.
@Suite("Remote SAML metadata", .serialized)
struct RemoteMetadataTests {
    static let mvpd = GatewayHarness.mvpd
    static let entityID = IdPMetadata.defaultEntityID(mvpd: GatewayHarness.mvpd)
    static let signer = try! TestIdentityProvider(keyPair: try! IdPKeyPair.generate(.rsa2048, commonName: "metadata signer"))
    static let otherSigner = try! TestIdentityProvider(keyPair: try! IdPKeyPair.generate(.rsa2048, commonName: "not the pinned signer"))

    /// Signed metadata of the harness IdP's entity with `pairs`' certificates.
    static func document(
        _ pairs: [IdPKeyPair], validUntil: Date? = Date().addingTimeInterval(7 * 86_400),
        signedBy signer: TestIdentityProvider = signer
    ) -> String {
        try! IdPMetadata(entityID: entityID, signingCertificates: pairs.map(\.certificatePEM), validUntil: validUntil).render(signedBy: signer)
    }

    /// A store `<tmp>/Cablevision/{metadata.url, metadata.refresh, metadata-signer.pem, platform-mapping-id}`
    /// and an empty cache directory.
    static func store(url: String, refresh: String = "0.2", signer pin: Bool = true) throws -> (store: String, cache: String) {
        let root = TestScratch.directory("samlgate-remote-md")
        let dir = root.appendingPathComponent(mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try url.write(to: dir.appendingPathComponent("metadata.url"), atomically: true, encoding: .utf8)
        try refresh.write(to: dir.appendingPathComponent("metadata.refresh"), atomically: true, encoding: .utf8)
        if pin {
            try signer.keyPair.certificatePEM.write(to: dir.appendingPathComponent("metadata-signer.pem"), atomically: true, encoding: .utf8)
        }
        try GatewayHarness.platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        let cache = TestScratch.directory("samlgate-md-cache")
        return (root.path, cache.path)
    }

    static func signed(_ idp: TestIdentityProvider) -> String {
        MetadataTrustTests.signed(idp)
    }

    /// Polls `condition` every 50 ms for up to `seconds`.
    /// A gateway whose one MVPD's keys come from the metadata source at `url` (defaults of
    /// ``store(url:refresh:signer:)``), running `body` once the first fetch let the IdP's
    /// responses verify; `body` gets the harness and the metadata cache directory.
    static func withSource(_ url: String, _ body: (GatewayHarness, String) async throws -> Void) async throws {
        let (store, cache) = try store(url: url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            #expect(try await eventually { try await harness.exchangeV1(signed(GatewayHarness.idp)).status == 204 })
            try await body(harness, cache)
        }
    }

    static func eventually(_ seconds: Double = 10, _ condition: () async throws -> Bool) async throws -> Bool {
        let end = Date().addingTimeInterval(TestTiming.seconds(seconds))
        while Date() < end {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    static func failures(_ harness: GatewayHarness, _ reason: String) async throws -> Double {
        try await harness.metric("samlgate_metadata_refresh_failures_total{source=\"\(mvpd)\",reason=\"\(reason)\"}")
    }

    @Test(
        "fetched at start-up, then rotated by refresh without a restart: old + new key, then the old one gone; unchanged metadata is asked for conditionally"
    )
    func fetchAndRotate() async throws {
        let server = try await MetadataServer.start(document: Self.document([GatewayHarness.idpPair]))
        defer { Task { await server.stop() } }
        let (store, cache) = try Self.store(url: server.url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
            #expect(FileManager.default.fileExists(atPath: cache + "/\(Self.mvpd)/metadata.xml"), "the good copy is kept in the cache")
            #expect(try await Self.eventually { server.conditionalRequests >= 2 }, "an unchanged source is asked with If-None-Match")
            // Counted once the 304 is back, a moment after the server saw the request.
            #expect(
                try await Self.eventually {
                    try await harness.metric("samlgate_metadata_refresh_total{source=\"\(Self.mvpd)\",result=\"not_modified\"}") >= 2
                })
            #expect(try await harness.metric("samlgate_metadata_refresh_total{source=\"\(Self.mvpd)\",result=\"updated\"}") == 1)
            let stamp = try await harness.metric("samlgate_metadata_last_refresh_timestamp_seconds{source=\"\(Self.mvpd)\"}")
            #expect(abs(stamp - Date().timeIntervalSince1970) < 30, "\(stamp)")

            // Each publication is valid for longer than the one before (one with the same
            // validUntil and other keys would be refused as a rollback: MetadataRollbackTests).
            server.set(
                document: Self.document([GatewayHarness.idpPair, MetadataTrustTests.nextPair], validUntil: Date().addingTimeInterval(8 * 86_400)))
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(MetadataTrustTests.nextIdP)).status == 204 })
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)

            server.set(document: Self.document([MetadataTrustTests.nextPair], validUntil: Date().addingTimeInterval(9 * 86_400)))
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).reason == "key_not_trusted" })
            #expect(try await harness.exchangeV1(Self.signed(MetadataTrustTests.nextIdP)).status == 204)
            #expect(try await harness.metric("samlgate_metadata_refresh_total{source=\"\(Self.mvpd)\",result=\"updated\"}") == 3)
        }
    }

    @Test(
        "every failure keeps the last good copy and is counted by reason: HTTP error, wrong signer, unsigned, expired, no validUntil over http, too large, timeout, redirect loop, source down"
    )
    func failuresKeepLastGoodCopy() async throws {
        let good = Self.document([GatewayHarness.idpPair])
        let server = try await MetadataServer.start(document: good)
        defer { Task { await server.stop() } }
        let (store, cache) = try Self.store(url: server.url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
            // Stretched under the sanitizers: a redirect loop's four requests must fail as a
            // redirect loop, not run out of time first (the stall below outlasts it either way).
            $0.metadataTimeout = TestTiming.seconds(3)
        }) { harness in
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
            let copy = try Data(contentsOf: URL(fileURLWithPath: cache + "/\(Self.mvpd)/metadata.xml"))
            let rotated = [MetadataTrustTests.nextPair]
            let faults: [(String, () -> Void)] = [
                ("http_status", { server.set(mode: .status(500)) }),
                ("invalid", { server.set(document: Self.document(rotated, signedBy: Self.otherSigner)) }),
                (
                    "invalid",
                    {
                        server.set(
                            document: IdPMetadata(entityID: Self.entityID, signingCertificates: [MetadataTrustTests.nextPair.certificatePEM]).render()
                        )
                    }
                ),
                ("invalid", { server.set(document: Self.document(rotated, validUntil: Date().addingTimeInterval(-60))) }),
                // Over http:// a signed copy without validUntil could be replayed for ever.
                ("invalid", { server.set(document: Self.document(rotated, validUntil: nil)) }),
                ("too_large", { server.set(document: "<x>" + String(repeating: " ", count: 1 << 20) + "</x>") }),
                ("timeout", { server.set(mode: .stall(.seconds(TestTiming.seconds(5)))) }),
                // The head in time, the body trickling: bounded by the same deadline.
                ("timeout", { server.set(mode: .trickle(pause: .milliseconds(100))) }),
                ("http_status", { server.set(mode: .redirect(server.url)) }),
            ]
            var expected: [String: Double] = [:]
            for (reason, fault) in faults {
                fault()
                expected[reason, default: 0] += 1
                let before = try await Self.failures(harness, reason)
                #expect(try await Self.eventually { try await Self.failures(harness, reason) > before }, "\(reason)")
                // The last good copy is still trusted, and still on disk unchanged.
                #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204, "\(reason)")
                #expect(try await harness.exchangeV1(Self.signed(MetadataTrustTests.nextIdP)).reason == "key_not_trusted", "\(reason)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: cache + "/\(Self.mvpd)/metadata.xml")) == copy, "\(reason)")
            }
            await server.stop()
            let before = try await Self.failures(harness, "network")
            #expect(try await Self.eventually { try await Self.failures(harness, "network") > before })
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            #expect(try await harness.send(.GET, "/readyz").status == 200)
        }
    }

    @Test("a restarted gateway starts from the cached copy while the source is down")
    func startFromCache() async throws {
        let server = try await MetadataServer.start(document: Self.document([GatewayHarness.idpPair]))
        let (store, cache) = try Self.store(url: server.url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
            $0.metadataTimeout = 2
        }) { harness async throws in
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
        }
        await server.stop()
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
            $0.metadataTimeout = 2
        }) { harness async throws in
            // No waiting: the copy was loaded with the store, before any fetch.
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
            #expect(try await Self.eventually { try await Self.failures(harness, "network") >= 1 })
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
        }
    }

    @Test("no copy yet and the source down: the gateway serves, the MVPD is not ready (503 metadata_unavailable) until the source answers")
    func unavailableUntilFetched() async throws {
        let server = try await MetadataServer.start(document: Self.document([GatewayHarness.idpPair]))
        defer { Task { await server.stop() } }
        server.set(mode: .status(503))
        let (store, cache) = try Self.store(url: server.url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            let refused = try await harness.exchangeV1(Self.signed(GatewayHarness.idp))
            #expect(refused.status == 503 && refused.reason == "metadata_unavailable", "\(refused.body)")
            let ready = try await harness.send(.GET, "/readyz")
            #expect(ready.status == 503 && ready.json?["mvpdsReady"] as? Int == 0, "\(ready.body)")
            let listed = try SamlgateProcess.run(["trust", "list", "--json", "--metadata-cache", cache, store])
            #expect(listed.status == 1)
            let object = try #require(try JSONSerialization.jsonObject(with: listed.stdout) as? [String: Any])
            let entry = try #require((object["mvpds"] as? [[String: Any]])?.first)
            #expect(entry["status"] as? String == "metadata_unavailable" && entry["source"] as? String == "remote", "\(entry)")
            #expect(entry["metadataUrl"] as? String == server.url && entry["cachedCopy"] as? Bool == false, "\(entry)")

            server.set(mode: .serve)
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
            #expect(try await harness.send(.GET, "/readyz").status == 200)
            let after = try SamlgateProcess.run(["trust", "list", "--json", "--metadata-cache", cache, store])
            #expect(after.status == 0, "\(after.stdoutText)")
            #expect(after.stdoutText.contains("\"cachedCopy\":true") && after.stdoutText.contains("\"status\":\"ready\""), "\(after.stdoutText)")
        }
    }

    @Test("a fetched aggregate (metadata.url + metadata.map beside the entries) is read through the map")
    func aggregate() async throws {
        let entities = [
            IdPMetadata(entityID: Self.entityID, signingCertificates: [GatewayHarness.idpPair.certificatePEM]),
            IdPMetadata(entityID: "https://other.example/idp", signingCertificates: [MetadataTrustTests.nextPair.certificatePEM]),
        ]
        let server = try await MetadataServer.start(
            document: try IdPMetadata.aggregate(entities, validUntil: Date().addingTimeInterval(86_400), signedBy: Self.signer))
        defer { Task { await server.stop() } }
        let root = TestScratch.directory("samlgate-remote-agg")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try server.url.write(to: root.appendingPathComponent("metadata.url"), atomically: true, encoding: .utf8)
        try "0.2".write(to: root.appendingPathComponent("metadata.refresh"), atomically: true, encoding: .utf8)
        try Self.signer.keyPair.certificatePEM.write(to: root.appendingPathComponent("metadata-signer.pem"), atomically: true, encoding: .utf8)
        try "\(Self.mvpd) \(Self.entityID)\n".write(to: root.appendingPathComponent("metadata.map"), atomically: true, encoding: .utf8)
        let dir = root.appendingPathComponent(Self.mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try GatewayHarness.platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        let cache = TestScratch.directory("samlgate-md-cache").path
        try await withHarness(configure: {
            $0.trustStore = root.path
            $0.metadataCache = cache
        }) { harness in
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
            #expect(try await harness.exchangeV1(Self.signed(MetadataTrustTests.nextIdP)).reason == "key_not_trusted", "an unmapped entity's key")
            #expect(FileManager.default.fileExists(atPath: cache + "/metadata.xml"))
            #expect(try await harness.metric("samlgate_metadata_refresh_total{source=\"aggregate\",result=\"updated\"}") == 1)
            // An aggregate that drops the mapped entity is refused; the last good copy stays.
            server.set(document: try IdPMetadata.aggregate([entities[1]], validUntil: Date().addingTimeInterval(86_400), signedBy: Self.signer))
            #expect(
                try await Self.eventually {
                    try await harness.metric("samlgate_metadata_refresh_failures_total{source=\"aggregate\",reason=\"invalid\"}") >= 1
                })
            #expect(try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204)
        }
    }

    @Test(
        "unsafe or incomplete sources stop the load with metadata_source_invalid: http:// without a pinned signer, credentials, no cache, beside metadata.xml, a bad refresh"
    )
    func refusedSources() throws {
        func code(_ store: String, cache: String?) -> String? {
            do {
                _ = try TrustStore.load(directory: store, metadataCache: cache)
                return nil
            } catch {
                return error.code.rawValue
            }
        }
        let cache = TestScratch.directory("samlgate-md-cache").path
        let insecure = try Self.store(url: "http://idp.example/metadata", signer: false)
        #expect(code(insecure.store, cache: cache) == "metadata_source_invalid")
        let listed = try SamlgateProcess.run(["trust", "list", "--metadata-cache", cache, insecure.store])
        #expect(listed.status == 1 && listed.stderr.contains("metadata_source_invalid") && listed.stderr.contains("pinned"), "\(listed.stderr)")
        #expect(code(try Self.store(url: "https://idp.example/metadata", signer: false).store, cache: cache) == nil, "https without a signer loads")
        #expect(code(try Self.store(url: "https://user:secret@idp.example/metadata").store, cache: cache) == "metadata_source_invalid")
        #expect(code(try Self.store(url: "ftp://idp.example/metadata").store, cache: cache) == "metadata_source_invalid")
        #expect(code(try Self.store(url: "https://idp.example/metadata").store, cache: nil) == "metadata_source_invalid")
        #expect(code(try Self.store(url: "https://idp.example/metadata", refresh: "0").store, cache: cache) == "metadata_source_invalid")
        let both = try Self.store(url: "https://idp.example/metadata")
        try Self.document([GatewayHarness.idpPair]).write(toFile: both.store + "/\(Self.mvpd)/metadata.xml", atomically: true, encoding: .utf8)
        #expect(code(both.store, cache: cache) == "metadata_source_invalid")
        // Through serve: refused at start-up, exit 2, the code in the message.
        let serve = try SamlgateProcess.run([
            "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", insecure.store,
            "--metadata-cache", cache, "--log-format", "text",
        ])
        #expect(serve.status == 2 && serve.stderr.contains("metadata_source_invalid"), "\(serve.stderr)")
    }
}

extension RemoteMetadataTests {
    @Test(
        "a cached copy that no longer loads (its pinned signer was changed) leaves the MVPD waiting for the next fetch instead of stopping the gateway"
    )
    func staleCachedCopy() async throws {
        let server = try await MetadataServer.start(document: Self.document([GatewayHarness.idpPair]))
        defer { Task { await server.stop() } }
        server.set(mode: .status(503))
        let (store, cache) = try Self.store(url: server.url)
        try FileManager.default.createDirectory(atPath: cache + "/\(Self.mvpd)", withIntermediateDirectories: true)
        try Self.document([GatewayHarness.idpPair], signedBy: Self.otherSigner)
            .write(toFile: cache + "/\(Self.mvpd)/metadata.xml", atomically: true, encoding: .utf8)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            let refused = try await harness.exchangeV1(Self.signed(GatewayHarness.idp))
            #expect(refused.status == 503 && refused.reason == "metadata_unavailable", "\(refused.body)")
            let listed = try SamlgateProcess.run(["trust", "list", "--json", "--metadata-cache", cache, store])
            #expect(listed.status == 1 && listed.stdoutText.contains("\"cachedCopyProblem\":\"metadata_signature_invalid"), "\(listed.stdoutText)")
            server.set(mode: .serve)
            #expect(try await Self.eventually { try await harness.exchangeV1(Self.signed(GatewayHarness.idp)).status == 204 })
        }
    }
}

extension RemoteMetadataTests {
    @Test("a good document that cannot be written to the cache is counted as reason cache and not trusted (the cache is what loads)")
    func cacheNotWritable() async throws {
        let server = try await MetadataServer.start(document: Self.document([GatewayHarness.idpPair]))
        defer { Task { await server.stop() } }
        let (store, cache) = try Self.store(url: server.url)
        // A file where the MVPD's cache directory must go: the copy cannot be written (root ignores modes).
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try "not a directory".write(toFile: cache + "/\(Self.mvpd)", atomically: true, encoding: .utf8)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            #expect(try await Self.eventually { try await Self.failures(harness, "cache") >= 1 })
            let refused = try await harness.exchangeV1(Self.signed(GatewayHarness.idp))
            #expect(refused.status == 503 && refused.reason == "metadata_unavailable", "\(refused.body)")
        }
    }
}
