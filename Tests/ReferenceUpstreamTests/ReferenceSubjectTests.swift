import Foundation
import GatewayTestSupport
import Testing

/// The user id the reference upstream gives an exchange comes from the verified Assertion's
/// NameID, read from a parsed document, not from the first `NameID` text in the bytes.
@Suite("Reference upstream subject")
struct ReferenceSubjectTests {
    /// The `userID` of the `appleSSO` profile a v2 exchange of `xml` returns.
    static func userID(_ h: GatewayHarness, _ xml: [UInt8]) async throws -> String? {
        let reply = try await h.exchangeV2(GatewayHarness.base64(xml))
        #expect(reply.status == 201, "\(reply.body)")
        let profile = (reply.json?["profiles"] as? [String: Any])?[GatewayHarness.mvpd] as? [String: Any]
        return ((profile?["attributes"] as? [String: Any])?["userID"] as? [String: Any])?["value"] as? String
    }

    @Test("a NameID in a comment before the Assertion gets the genuine user's id, not the comment's")
    func commentBeforeAssertion() async throws {
        try await withHarness { h in
            let alice = try await Self.userID(h, GatewayHarness.issue())
            let admin = try await Self.userID(h, GatewayHarness.issue { $0.user = "admin@victim.example" })
            let genuine = String(decoding: GatewayHarness.issue(), as: UTF8.self)
            let trick = genuine.replacingOccurrences(of: "<saml:Assertion", with: "<!--<NameID>admin@victim.example<--><saml:Assertion")
            #expect(trick != genuine)
            let tricked = try await Self.userID(h, Array(trick.utf8))
            #expect(alice != nil && admin != nil && alice != admin)
            #expect(tricked == alice)
        }
    }
}
