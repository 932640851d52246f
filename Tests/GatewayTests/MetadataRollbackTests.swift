import Foundation
import Gateway
import GatewayTestSupport
import SAMLVerification
import TestIdP
import Testing

/// A fetched metadata copy older than the one in use — a signed document served again after the
/// publisher rotated its keys — is refused (`reason` `rollback`), at refresh and after a
/// restart, and the rotated keys stay in force.
@Suite("Metadata rollback", .serialized)
struct MetadataRollbackTests {
    typealias Remote = RemoteMetadataTests

    /// Now, to the second (the precision of `validUntil` as rendered), so that two documents can
    /// carry the same instant.
    static let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

    static func day(_ days: Double) -> Date { base.addingTimeInterval(days * 86_400) }

    /// Signed metadata of the harness IdP's entity with `pairs`' certificates.
    static func document(_ pairs: [IdPKeyPair], validUntil: Date?, created: Date? = nil, id: String? = nil) -> String {
        var metadata = IdPMetadata(entityID: Remote.entityID, signingCertificates: pairs.map(\.certificatePEM), validUntil: validUntil)
        metadata.creationInstant = created
        metadata.id = id
        return try! metadata.render(signedBy: Remote.signer)
    }

    static let old = [GatewayHarness.idpPair]
    static let new = [MetadataTrustTests.nextPair]

    /// Whether the old key is refused and the new one trusted (the rotation in force).
    static func rotated(_ harness: GatewayHarness) async throws -> Bool {
        let old = try await harness.exchangeV1(Remote.signed(GatewayHarness.idp))
        let new = try await harness.exchangeV1(Remote.signed(MetadataTrustTests.nextIdP))
        return old.reason == "key_not_trusted" && new.status == 204
    }

    static func updated(_ harness: GatewayHarness) async throws -> Double {
        try await harness.metric("samlgate_metadata_refresh_total{source=\"\(Remote.mvpd)\",result=\"updated\"}")
    }

    /// Serves `document` and waits until its fetch is counted as a rollback; the rotation stays.
    static func expectRollback(_ document: String, _ server: MetadataServer, _ harness: GatewayHarness, cache: String, _ label: String) async throws {
        let kept = try Data(contentsOf: URL(fileURLWithPath: cache + "/\(Remote.mvpd)/metadata.xml"))
        let before = try await Remote.failures(harness, "rollback")
        server.set(document: document)
        #expect(try await Remote.eventually { try await Remote.failures(harness, "rollback") > before }, "\(label)")
        #expect(try await rotated(harness), "\(label): the rotated keys stay in force")
        #expect(try Data(contentsOf: URL(fileURLWithPath: cache + "/\(Remote.mvpd)/metadata.xml")) == kept, "\(label): the cached copy is kept")
    }

    @Test(
        "after a rotation, the pre-rotation document (earlier validUntil, none, or the same validUntil with other keys) is refused as a rollback; a re-signed copy of the current one and a later one are taken"
    )
    func rollbackByValidUntil() async throws {
        let server = try await MetadataServer.start(document: Self.document(Self.old, validUntil: Self.day(7)))
        defer { Task { await server.stop() } }
        try await Remote.withSource(server.url) { harness, cache async throws in
            let preRotation = Self.document(Self.old, validUntil: Self.day(7))
            server.set(document: Self.document(Self.new, validUntil: Self.day(8)))
            #expect(try await Remote.eventually { try await Self.rotated(harness) })

            try await Self.expectRollback(preRotation, server, harness, cache: cache, "the pre-rotation document")
            try await Self.expectRollback(
                Self.document(Self.old, validUntil: Self.day(8)), server, harness, cache: cache, "the same validUntil, the old key")
            try await Self.expectRollback(
                Self.document(Self.old + Self.new, validUntil: Self.day(8)), server, harness, cache: cache, "the same validUntil, a key added")
            // http:// needs a validUntil; an https:// document without one after one with it is
            // no newer either (not reachable here: the check requires one over http://).
            #expect(try await harness.metric("samlgate_metadata_refresh_total{source=\"\(Remote.mvpd)\",result=\"failed\"}") >= 3)

            // The same keys and validUntil in other bytes (another ID, as a re-signature gives) are taken.
            let before = try await Self.updated(harness)
            server.set(document: Self.document(Self.new, validUntil: Self.day(8), id: "_resigned"))
            #expect(try await Remote.eventually { try await Self.updated(harness) > before })
            #expect(try await Self.rotated(harness))

            // A later document is taken, even bringing the old key back: the publisher's choice.
            server.set(document: Self.document(Self.old, validUntil: Self.day(9)))
            #expect(try await Remote.eventually { try await harness.exchangeV1(Remote.signed(GatewayHarness.idp)).status == 204 })
        }
    }

    @Test(
        "with a creationInstant (mdrpi:PublicationInfo) on both copies, it decides: an earlier publication is refused even with a later validUntil, a later one is taken even with an earlier validUntil"
    )
    func rollbackByCreationInstant() async throws {
        let server = try await MetadataServer.start(document: Self.document(Self.old, validUntil: Self.day(7), created: Self.day(-2)))
        defer { Task { await server.stop() } }
        try await Remote.withSource(server.url) { harness, cache async throws in
            // Published later with a shorter validity: taken.
            server.set(document: Self.document(Self.new, validUntil: Self.day(5), created: Self.day(-1)))
            #expect(try await Remote.eventually { try await Self.rotated(harness) })
            // Published earlier, valid for longer: refused.
            try await Self.expectRollback(
                Self.document(Self.old, validUntil: Self.day(30), created: Self.day(-2)), server, harness, cache: cache,
                "an earlier creationInstant")
            // Without a creationInstant, validUntil decides: earlier than the copy in use, refused.
            try await Self.expectRollback(
                Self.document(Self.old, validUntil: Self.day(4)), server, harness, cache: cache, "no creationInstant, an earlier validUntil")
        }
    }

    @Test("after a restart, a fetched copy older than the cached one is refused too")
    func rollbackAcrossRestart() async throws {
        let preRotation = Self.document(Self.old, validUntil: Self.day(7))
        let server = try await MetadataServer.start(document: preRotation)
        defer { Task { await server.stop() } }
        let (store, cache) = try Remote.store(url: server.url)
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            #expect(try await Remote.eventually { try await harness.exchangeV1(Remote.signed(GatewayHarness.idp)).status == 204 })
            server.set(document: Self.document(Self.new, validUntil: Self.day(8)))
            #expect(try await Remote.eventually { try await Self.rotated(harness) })
        }
        server.set(document: preRotation)
        let requests = server.requests
        try await withHarness(configure: {
            $0.trustStore = store
            $0.metadataCache = cache
        }) { harness async throws in
            #expect(try await Remote.eventually { try await Remote.failures(harness, "rollback") >= 1 })
            #expect(server.requests > requests)
            #expect(try await Self.rotated(harness))
            #expect(try await Self.updated(harness) == 0)
        }
    }
}
