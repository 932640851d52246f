import Foundation
import GatewayTestSupport
import TestIdP
import Testing

/// An IdP that rotates its signing key without notice: the first response signed with the new
/// key fetches the MVPD's metadata at once (not at the next scheduled refresh, an hour away
/// here) and is verified again against it — no outage — while forged responses cannot turn that
/// into a flood of fetches.
@Suite("Key rollover by an out-of-turn metadata fetch", .serialized)
struct KeyRolloverTests {
    static let rotated = try! IdPKeyPair.generate(.rsa2048, commonName: "harness IdP, rotated")

    /// A gateway whose trust store is fetched from a served metadata document, refreshed only
    /// hourly: within a test every fetch is out of turn, or a reload the test makes itself.
    static func withServedHarness(_ body: (MetadataServer, _ cache: String, GatewayHarness) async throws -> Void) async throws {
        try await MetadataServer.withServedStore(refresh: "3600") { metadata, store, cache in
            try await withHarness(configure: {
                $0.trustStore = store
                $0.metadataCache = cache
            }) { h in
                try await body(metadata, cache, h)
            }
        }
    }

    @Test("a key rotated between two requests is trusted within one request; a forged response then fetches nothing more within metadata-min-refetch")
    func rotationWithinOneRequest() async throws {
        try await Self.withServedHarness { metadata, _, h in
            let old = RemoteMetadataTests.signed(GatewayHarness.idp)
            #expect(try await RemoteMetadataTests.eventually { try await h.exchangeV1(old).status == 204 })
            // The IdP publishes the new key only and signs with it from now on.
            // A later validUntil: a copy that cannot be shown newer is refused as a rollback.
            metadata.set(document: RemoteMetadataTests.document([Self.rotated], validUntil: Date().addingTimeInterval(8 * 86_400)))
            let fresh = try await h.exchangeV1(RemoteMetadataTests.signed(try TestIdentityProvider(keyPair: Self.rotated)))
            #expect(fresh.status == 204, "\(fresh.body)")
            #expect(try await h.metric("samlgate_metadata_refetch_total{source=\"\(GatewayHarness.mvpd)\",result=\"updated\"}") == 1)
            #expect(
                try await h.metric(
                    "samlgate_verifications_by_key_total{mvpd=\"\(GatewayHarness.mvpd)\",key=\"\(MetadataTrustTests.fingerprint(Self.rotated))\"}"
                ) == 1)
            // The old key is gone with the rotation; a forged response is refused at once,
            // with no second fetch within the interval.
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            let refused = try await h.exchangeV1(GatewayHarness.base64(forged))
            #expect(refused.status == 400 && refused.body.contains("key_not_trusted"), "\(refused.body)")
            #expect(try await h.exchangeV1(old).status == 400)
            #expect(try await h.metric("samlgate_metadata_refetch_total{source=\"\(GatewayHarness.mvpd)\",result=\"suppressed\"}") == 2)
            #expect(metadata.requests == 2, "the fetch at start-up and one out of turn, not \(metadata.requests)")
        }
    }

    @Test("a store reloaded while a response was on its way is used for a second verification, without a fetch")
    func newerStoreWithoutFetch() async throws {
        try await Self.withServedHarness { metadata, cache, h in
            #expect(
                try await RemoteMetadataTests.eventually { try await h.exchangeV1(RemoteMetadataTests.signed(GatewayHarness.idp)).status == 204 })
            let body = GatewayHarness.form(GatewayHarness.v1Fields(RemoteMetadataTests.signed(try TestIdentityProvider(keyPair: Self.rotated))))
            let port = Int(h.gatewayURL.split(separator: ":").last!)!
            let connection = try RawConnection(port: port)
            // The head (the request's trust snapshot is taken now) and half the body…
            let half = body.index(body.startIndex, offsetBy: body.count / 2)
            try await connection.write(
                "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body[..<half])
            // …then the rotation reaches the store another way (a scheduled refresh, here
            // the cached copy replaced and reloaded)…
            let rotated = RemoteMetadataTests.document([Self.rotated], validUntil: Date().addingTimeInterval(8 * 86_400))
            try rotated.write(toFile: cache + "/\(GatewayHarness.mvpd)/metadata.xml", atomically: true, encoding: .utf8)
            #expect(h.gateway.core.reloadTrustStore())
            // …and the rest of the body: verified again against the newer store, no fetch.
            try await connection.write(String(body[half...]))
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 204, "\(answer.body)")
            #expect(metadata.requests == 1, "no fetch out of turn, not \(metadata.requests)")
        }
    }

    @Test("a key not trusted for an MVPD whose keys are files fetches nothing: refused as before")
    func staticTrustFetchesNothing() async throws {
        try await withHarness { h in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            #expect(try await h.exchangeV1(GatewayHarness.base64(forged)).status == 400)
            #expect(!(try await h.send(.GET, "/metrics").body.contains("samlgate_metadata_refetch_total")))
        }
    }
}
