import CLITestSupport
import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Trust from SAML metadata: `DIR/<mvpd>/metadata.xml`, the aggregate `DIR/metadata.xml` with
/// `DIR/metadata.map`, `validUntil`, and malformed metadata refused with a code naming the file.
@Suite("Trust store: SAML metadata")
struct MetadataTrustStoreTests {
    static let entityID = IdPMetadata.defaultEntityID(mvpd: Fixtures.mvpd)

    /// A trust store directory: `files` maps relative paths (`TestMVPD/metadata.xml`) to text.
    static func store(_ files: [String: String]) throws -> String {
        let root = TestScratch.directory("samlgate-md")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root.path
    }

    static func metadata(
        _ pairs: [IdPKeyPair] = [Fixtures.rsaPair], entityID: String = entityID, validUntil: Date? = nil,
        _ configure: (inout IdPMetadata) -> Void = { _ in }
    ) -> IdPMetadata {
        var metadata = IdPMetadata(entityID: entityID, signingCertificates: pairs.map(\.certificatePEM), validUntil: validUntil)
        configure(&metadata)
        return metadata
    }

    static func verifier(_ root: String) throws -> Verifier {
        Verifier(trustStore: try TrustStore.load(directory: root), options: VerificationOptions(), replayCache: nil)
    }

    static func code(_ xml: String, _ verifier: Verifier, mvpd: String = Fixtures.mvpd, now: Date = Date()) -> VerificationError.Code? {
        do {
            _ = try verifier.verify(Array(xml.utf8), mvpd: mvpd, now: now)
            return nil
        } catch {
            return error.code
        }
    }

    /// The code and message `TrustStore.load` fails with.
    static func loadFailure(_ root: String) -> TrustStoreError? {
        do {
            _ = try TrustStore.load(directory: root)
            return nil
        } catch {
            return error
        }
    }

    @Test("a metadata-only entry trusts its signing certificates, never its encryption ones, and expects its entityID as Issuer")
    func metadataOnly() throws {
        let text = Self.metadata { $0.encryptionCertificates = [Fixtures.attackerPair.certificatePEM] }.render()
        let root = try Self.store(["\(Fixtures.mvpd)/metadata.xml": text])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try TrustStore.load(directory: root)
        let provider = try #require(store.provider(for: Fixtures.mvpd))
        #expect(provider.keys.count == 1)
        #expect(provider.issuer == Self.entityID)
        #expect(provider.entityID == Self.entityID)
        #expect(provider.source == "metadata")
        #expect(provider.validUntil == nil)
        // The same certificate as a PEM file has the same fingerprint and expiry.
        let pinned = try TrustedKey(pem: Fixtures.rsaPair.certificatePEM)
        #expect(provider.keys[0].fingerprint == pinned.fingerprint)
        #expect(provider.keys[0].fingerprint.count == 64)
        #expect(provider.keys[0].shortFingerprint == String(pinned.fingerprint.prefix(8)))
        let notAfter = try #require(provider.keys[0].notAfter)
        #expect(notAfter > Date().addingTimeInterval(9 * 365 * 86_400))

        let verifier = try Self.verifier(root)
        #expect(Self.code(Fixtures.issue(), verifier) == nil)
        let verified = try verifier.verify(Array(Fixtures.issue().utf8), mvpd: Fixtures.mvpd)
        #expect(verified.keyFingerprint == pinned.shortFingerprint)
        #expect(Self.code(Fixtures.issue(idp: Fixtures.attackerIdP), verifier) == .keyNotTrusted, "an encryption key never verifies")
        #expect(Self.code(Fixtures.issue { $0.issuer = "https://idp.elsewhere.example/saml" }, verifier) == .issuerMismatch)
    }

    @Test("KeyDescriptor without use counts for signing; PEM files beside metadata add keys; an issuer file overrides the entityID")
    func mixed() throws {
        let text = Self.metadata([]) { $0.unspecifiedCertificates = [Fixtures.rsaPair.certificatePEM] }.render()
        let root = try Self.store([
            "\(Fixtures.mvpd)/metadata.xml": text,
            "\(Fixtures.mvpd)/next.pem": Fixtures.rotatedPair.certificatePEM,
            "\(Fixtures.mvpd)/issuer": "https://issuer.override.example\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let provider = try #require(try TrustStore.load(directory: root).provider(for: Fixtures.mvpd))
        #expect(provider.keys.count == 2)
        #expect(provider.source == "pem+metadata")
        #expect(provider.issuer == "https://issuer.override.example")
        let verifier = try Self.verifier(root)
        #expect(Self.code(Fixtures.issue { $0.issuer = "https://issuer.override.example" }, verifier) == nil)
        #expect(Self.code(Fixtures.issue(), verifier) == .issuerMismatch, "the override replaces the entityID")
    }

    @Test("metadata with only encryption keys is refused: metadata_no_signing_key")
    func noSigningKey() throws {
        let text = Self.metadata([]) { $0.encryptionCertificates = [Fixtures.rsaPair.certificatePEM] }.render()
        let root = try Self.store(["\(Fixtures.mvpd)/metadata.xml": text])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = try #require(Self.loadFailure(root))
        #expect(error.code == .metadataNoSigningKey)
        #expect(error.message.contains("\(Fixtures.mvpd)/metadata.xml"), "\(error.message)")
    }

    @Test("validUntil passed: the store loads, the MVPD is not ready and its responses are refused with metadata_expired (503)")
    func expired() throws {
        let past = Date().addingTimeInterval(-60)
        let root = try Self.store([
            "\(Fixtures.mvpd)/metadata.xml": Self.metadata(validUntil: past).render(),
            "Other/metadata.xml": Self.metadata([Fixtures.ecPair], entityID: "https://other.example/idp").render(),
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try TrustStore.load(directory: root)
        #expect(store.providers.count == 2)
        #expect(store.readyCount() == 1)
        let provider = try #require(store.provider(for: Fixtures.mvpd))
        #expect(!provider.isReady(at: Date()))
        let verifier = try Self.verifier(root)
        do {
            _ = try verifier.verify(Array(Fixtures.issue().utf8), mvpd: Fixtures.mvpd)
            Issue.record("expired metadata was trusted")
        } catch {
            #expect(error.code == .metadataExpired)
        }
        // Before validUntil the same store verifies: the date, not the load, decides.
        #expect(Self.code(Fixtures.issue { $0.now = past.addingTimeInterval(-120) }, verifier, now: past.addingTimeInterval(-100)) == nil)
    }

    @Test("an aggregate picks its entities through metadata.map; validUntil of the EntitiesDescriptor applies to each")
    func aggregate() throws {
        let soon = Date().addingTimeInterval(3600)
        let aggregate = IdPMetadata.aggregate(
            [
                Self.metadata(),
                Self.metadata([Fixtures.ecPair], entityID: "https://idp.second.example/saml"),
                Self.metadata([Fixtures.attackerPair], entityID: "https://unmapped.example/idp"),
            ], validUntil: soon)
        let map = "# mvpd entityID\n\(Fixtures.mvpd) \(Self.entityID)\r\n\nSecond\thttps://idp.second.example/saml\n"
        let root = try Self.store([
            "metadata.xml": aggregate, "metadata.map": map, "Second/platform-mapping-id": "second-apple",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try TrustStore.load(directory: root)
        #expect(store.mvpds == ["Second", Fixtures.mvpd])
        let first = try #require(store.provider(for: Fixtures.mvpd))
        #expect(first.source == "aggregate")
        #expect(first.validUntil.map { abs($0.timeIntervalSince(soon)) < 1 } == true)
        #expect(store.provider(for: "Second")?.platformMappingID == "second-apple")
        #expect(store.provider(for: "Second")?.issuer == "https://idp.second.example/saml")
        let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: nil)
        #expect(Self.code(Fixtures.issue(), verifier) == nil)
        #expect(Self.code(Fixtures.issue(idp: Fixtures.ecIdP) { $0.issuer = "https://idp.second.example/saml" }, verifier, mvpd: "Second") == nil)
        #expect(Self.code(Fixtures.issue(idp: Fixtures.ecIdP), verifier) == .keyNotTrusted, "each MVPD trusts its own entity only")
        #expect(Self.code(Fixtures.issue(idp: Fixtures.attackerIdP), verifier) == .keyNotTrusted)
    }

    @Test(
        "aggregate mistakes are refused with metadata_entity_missing",
        arguments: [
            ("metadata.map", "Other https://missing.example/idp\n"),
            ("metadata.map", "TestMVPD\n"),
            ("metadata.map", "TestMVPD a\nTestMVPD b\n"),
            ("metadata.map", "../x https://missing.example/idp\n"),
            ("none", ""),
        ])
    func aggregateMistakes(_ file: String, _ text: String) throws {
        var files = ["metadata.xml": IdPMetadata.aggregate([Self.metadata()])]
        if file != "none" { files[file] = text }
        let root = try Self.store(files)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = try #require(Self.loadFailure(root))
        #expect(error.code == .metadataEntityMissing, "\(error)")
    }

    @Test("an aggregate holding a mapped entityID twice is refused (which of the two speaks for the MVPD would be an accident of order)")
    func aggregateDuplicateEntity() throws {
        let twice = IdPMetadata.aggregate([Self.metadata([Fixtures.rsaPair]), Self.metadata([Fixtures.attackerIdP.keyPair])])
        let root = try Self.store(["metadata.xml": twice, "metadata.map": "\(Fixtures.mvpd) \(Self.entityID)\n"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = try #require(Self.loadFailure(root))
        #expect(error.code == .metadataMalformed && error.message.contains("2 times"), "\(error)")
        // An entity the map does not name may repeat: it is not trusted anyway.
        let unmapped = IdPMetadata.aggregate([
            Self.metadata(), Self.metadata(entityID: "https://x.example/idp"), Self.metadata(entityID: "https://x.example/idp"),
        ])
        let fine = try Self.store(["metadata.xml": unmapped, "metadata.map": "\(Fixtures.mvpd) \(Self.entityID)\n"])
        defer { try? FileManager.default.removeItem(atPath: fine) }
        #expect(Self.loadFailure(fine) == nil)
    }

    @Test("an MVPD with its own metadata.xml and an aggregate entity is refused (which one would be trusted?)")
    func ambiguous() throws {
        let root = try Self.store([
            "metadata.xml": IdPMetadata.aggregate([Self.metadata()]), "metadata.map": "\(Fixtures.mvpd) \(Self.entityID)\n",
            "\(Fixtures.mvpd)/metadata.xml": Self.metadata().render(),
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(Self.loadFailure(root)?.code == .trustStoreInvalid)
    }

    static let good = metadata().render()
    static let malformed: [(String, String)] = [
        ("not XML", "this is not metadata"),
        ("a DOCTYPE with an entity", "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"x\">]>" + good.split(separator: "\n", maxSplits: 1)[1]),
        ("another root", "<md:EntitiesDescriptorX xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\"/>"),
        ("no entityID", good.replacingOccurrences(of: "entityID=", with: "entityId=")),
        ("a certificate that is not base64", good.replacingOccurrences(of: "<ds:X509Certificate>", with: "<ds:X509Certificate>*")),
        (
            "a certificate that is base64 but not a certificate",
            good.replacingOccurrences(of: "<ds:X509Certificate>", with: "<ds:X509Certificate>AAAA")
        ),
        (
            "a validUntil that is not a date",
            metadata(validUntil: Date()).render().replacingOccurrences(of: "validUntil=\"", with: "validUntil=\"soon")
        ),
        (
            "too many attributes",
            good.replacingOccurrences(of: "<md:NameIDFormat", with: "<md:NameIDFormat " + (0..<100).map { "a\($0)=\"\"" }.joined(separator: " "))
        ),
        ("two entities in one MVPD's file", IdPMetadata.aggregate([metadata(), metadata(entityID: "https://b.example")])),
        (
            "more than 1 MiB",
            good.replacingOccurrences(of: "<md:NameIDFormat", with: "<!--" + String(repeating: "x", count: 1 << 20) + "--><md:NameIDFormat")
        ),
    ]

    @Test("malformed metadata is refused with metadata_malformed, naming the file", arguments: malformed)
    func malformedMetadata(_ what: String, _ text: String) throws {
        let root = try Self.store(["\(Fixtures.mvpd)/metadata.xml": text])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = try #require(Self.loadFailure(root), "\(what) was accepted")
        #expect(error.code == .metadataMalformed, "\(what): \(error)")
        #expect(error.message.contains("\(Fixtures.mvpd)/metadata.xml"), "\(what): \(error.message)")
    }

    @Test("rotation: old + new key, then the old one removed, through reloads; a broken reload keeps the previous store")
    func rotation() throws {
        let root = try Self.store(["\(Fixtures.mvpd)/metadata.xml": Self.metadata([Fixtures.rsaPair]).render()])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/\(Fixtures.mvpd)/metadata.xml"
        let trust = try ReloadableTrustStore(directory: root)
        let rotatedIdP = try TestIdentityProvider(keyPair: Fixtures.rotatedPair)
        func code(_ idp: TestIdentityProvider) -> VerificationError.Code? {
            Self.code(Fixtures.issue(idp: idp), Verifier(trustStore: trust.current, options: VerificationOptions(), replayCache: nil))
        }
        #expect(code(Fixtures.rsaIdP) == nil)
        #expect(code(rotatedIdP) == .keyNotTrusted)
        try Self.metadata([Fixtures.rsaPair, Fixtures.rotatedPair]).render().write(toFile: path, atomically: true, encoding: .utf8)
        try trust.reload()
        #expect(code(Fixtures.rsaIdP) == nil)
        #expect(code(rotatedIdP) == nil)
        try Self.metadata([Fixtures.rotatedPair]).render().write(toFile: path, atomically: true, encoding: .utf8)
        try trust.reload()
        #expect(code(Fixtures.rsaIdP) == .keyNotTrusted)
        #expect(code(rotatedIdP) == nil)
        try "<md:EntityDescriptor".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: TrustStoreError.self) { try trust.reload() }
        #expect(code(rotatedIdP) == nil, "the previous store stays in place")
    }
}

/// Signed metadata against a pinned signer (`metadata-signer.pem`), checked with the response
/// verifier's signature code and defences.
@Suite("Trust store: signed SAML metadata")
struct SignedMetadataTests {
    static let federationPair = try! IdPKeyPair.generate(.rsa2048, commonName: "federation signer")
    static let federation = try! TestIdentityProvider(keyPair: federationPair)
    static let entry = "\(Fixtures.mvpd)/metadata.xml"
    static let signer = "\(Fixtures.mvpd)/metadata-signer.pem"

    static func signed(_ signer: TestIdentityProvider = federation) throws -> String {
        try MetadataTrustStoreTests.metadata().render(signedBy: signer)
    }

    @Test("metadata signed by the pinned signer loads; the signer's certificate is never an IdP key")
    func pinned() throws {
        let root = try MetadataTrustStoreTests.store([Self.entry: try Self.signed(), Self.signer: Self.federationPair.certificatePEM])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try TrustStore.load(directory: root)
        #expect(store.provider(for: Fixtures.mvpd)?.keys.count == 1)
        let verifier = Verifier(trustStore: store, options: VerificationOptions(), replayCache: nil)
        #expect(MetadataTrustStoreTests.code(Fixtures.issue(), verifier) == nil)
        #expect(MetadataTrustStoreTests.code(Fixtures.issue(idp: Self.federation), verifier) == .keyNotTrusted)
    }

    /// A signed document with `change` applied after signing.
    static func tampered(_ change: (String) -> String) throws -> String {
        change(try signed())
    }

    /// What is wrong, the verifier's code in the message, the document.
    static let refusals: [(String, String, @Sendable () throws -> String)] = [
        ("unsigned", "signature_missing", { MetadataTrustStoreTests.metadata().render() }),
        ("signed by another key", "key_not_trusted", { try signed(Fixtures.attackerIdP) }),
        (
            "a certificate swapped after signing", "signature_invalid",
            {
                try tampered {
                    $0.replacingOccurrences(
                        of: IdPMetadata.base64Certificate(Fixtures.rsaPair.certificatePEM),
                        with: IdPMetadata.base64Certificate(Fixtures.attackerPair.certificatePEM))
                }
            }
        ),
        (
            "validUntil added after signing", "signature_invalid",
            {
                try tampered { $0.replacingOccurrences(of: "entityID=", with: "validUntil=\"2099-01-01T00:00:00Z\" entityID=") }
            }
        ),
        (
            "the signature referencing another element", "reference_mismatch",
            {
                try tampered {
                    $0.replacingOccurrences(of: "URI=\"#_metadata\"", with: "URI=\"#_other\"")
                        .replacingOccurrences(of: "<md:IDPSSODescriptor ", with: "<md:IDPSSODescriptor ID=\"_other\" ")
                }
            }
        ),
        (
            "two elements with the root's ID (wrapping)", "duplicate_id",
            {
                try tampered { $0.replacingOccurrences(of: "<md:IDPSSODescriptor ", with: "<md:IDPSSODescriptor ID=\"_metadata\" ") }
            }
        ),
        (
            // Each listed prefix is looked up at every element canonicalized: a CPU bomb at load.
            "an InclusiveNamespaces PrefixList of 2,000 prefixes", "too_many_namespaces",
            {
                try tampered {
                    $0.replacingOccurrences(
                        of: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>",
                        with: "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\">"
                            + "<ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\""
                            + (0..<2000).map { "p\($0)" }.joined(separator: " ") + "\"/></ds:Transform>"
                    )
                    .replacingOccurrences(of: "PrefixList=\"xs\"", with: "PrefixList=\"" + (0..<2000).map { "p\($0)" }.joined(separator: " ") + "\"")
                }
            }
        ),
        (
            "SHA-1 digests", "algorithm_not_allowed",
            {
                try tampered {
                    $0.replacingOccurrences(of: "http://www.w3.org/2001/04/xmlenc#sha256", with: "http://www.w3.org/2000/09/xmldsig#sha1")
                }
            }
        ),
    ]

    @Test(
        "with a pinned signer, unsigned, wrongly signed, tampered or wrapped metadata is refused: metadata_signature_invalid",
        arguments: refusals)
    func refused(_ what: String, _ code: String, _ make: @Sendable () throws -> String) throws {
        let root = try MetadataTrustStoreTests.store([Self.entry: try make(), Self.signer: Self.federationPair.certificatePEM])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = try #require(MetadataTrustStoreTests.loadFailure(root), "\(what) was accepted")
        #expect(error.code == .metadataSignatureInvalid, "\(what): \(error)")
        #expect(error.message.hasPrefix("\(Fixtures.mvpd)/metadata.xml: \(code): "), "\(error.message)")
    }

    @Test("without a pinned signer the signature is not checked; a private key as signer is refused")
    func unpinned() throws {
        let root = try MetadataTrustStoreTests.store([Self.entry: try Self.signed(Fixtures.attackerIdP)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try TrustStore.load(directory: root).provider(for: Fixtures.mvpd)?.keys.count == 1)
        try Self.federationPair.privateKeyPEM.write(toFile: root + "/" + Self.signer, atomically: true, encoding: .utf8)
        #expect(MetadataTrustStoreTests.loadFailure(root)?.code == .trustStoreInvalid)
    }

    @Test("a signed aggregate with DIR/metadata-signer.pem")
    func aggregate() throws {
        let entities = [MetadataTrustStoreTests.metadata()]
        let map = "\(Fixtures.mvpd) \(MetadataTrustStoreTests.entityID)\n"
        let good = try IdPMetadata.aggregate(entities, signedBy: Self.federation)
        let root = try MetadataTrustStoreTests.store([
            "metadata.xml": good, "metadata.map": map, "metadata-signer.pem": Self.federationPair.certificatePEM,
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try TrustStore.load(directory: root).provider(for: Fixtures.mvpd) != nil)
        try (try IdPMetadata.aggregate(entities, signedBy: Fixtures.attackerIdP)).write(
            toFile: root + "/metadata.xml", atomically: true, encoding: .utf8)
        #expect(MetadataTrustStoreTests.loadFailure(root)?.code == .metadataSignatureInvalid)
    }
}
