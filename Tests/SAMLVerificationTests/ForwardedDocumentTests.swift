import Foundation
import SAMLVerification
import TestIdP
import Testing

/// The verdict covers the document that is forwarded: markup hidden from the verifier in the
/// original (a comment, CDATA section or processing instruction whose terminator is split by a
/// line break) and revealed by the cookbook's normalization never rides along with a verdict.
@Suite struct ForwardedDocumentTests {
    /// An Assertion for another user, signed by an attacker: what the hidden markup smuggles in.
    static let forged = Fixtures.issue(idp: Fixtures.attackerIdP, user: "admin@victim.example").assertionElement

    /// Ways to hide `markup` so that only normalization (which deletes line breaks) reveals it.
    static let hidingPlaces: [(name: String, open: String, close: String)] = [
        ("comment", "<!--x-\n->", "<!-\n-y-->"),
        ("CDATA", "<![CDATA[x]]\n>", "<![CDATA[y]]>"),
        ("processing instruction", "<?x a?\n>", "<?y b?>"),
    ]

    /// The genuine response with `open + forged Assertion + close` before its own Assertion.
    static func smuggled(_ place: (name: String, open: String, close: String)) -> String {
        Fixtures.issue(.assertion).replacingFirst("<saml:Assertion ", with: place.open + forged + place.close + "<saml:Assertion ")
    }

    /// The code a verification for forwarding refuses `xml` with, `nil` when it is accepted.
    static func refusal(_ xml: String, fallback: NormalizationFallback = .equivalentTree) -> VerificationError.Code? {
        switch Fixtures.forwarded(xml, fallback: fallback) {
        case .success: return nil
        case .failure(let error): return error.code
        }
    }

    @Test(arguments: hidingPlaces.indices)
    func hiddenAssertionIsRefusedInCookbookForm(_ index: Int) throws {
        let xml = Self.smuggled(Self.hidingPlaces[index])
        // The original itself is genuine (the forged Assertion is text): xmlsec accepts it.
        #expect(try #require(Fixtures.accept(xml)).nameID == "alice@example.com")
        // Its normalization holds two Assertions: never forwarded with a verdict.
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
    }

    @Test(arguments: hidingPlaces.indices)
    func hiddenAssertionForwardsTheVerifiedOriginalWhenPreservingSignatures(_ index: Int) throws {
        let verified = try Fixtures.forwarded(Self.smuggled(Self.hidingPlaces[index]), fallback: .original).get()
        #expect(verified.normalization == .original)
        #expect(verified.nameID == "alice@example.com")
    }

    @Test func secondNameIDInsideTheSignedAssertion() throws {
        // Comments are not part of exclusive C14N: the signature covers the raw document.
        let hidden = "<!--x-\n-><saml:NameID>admin@victim.example</saml:NameID><!-\n-y-->"
        let xml = Fixtures.issue(.assertion).replacingFirst("</saml:NameID>", with: "</saml:NameID>" + hidden)
        #expect(try #require(Fixtures.accept(xml)).nameID == "alice@example.com")
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
        #expect(try Fixtures.forwarded(xml, fallback: .original).get().normalization == .original)
    }

    @Test func attributeValueChangedByNormalizationIsNotEquivalent() throws {
        // The signature breaks under normalization (line breaks in SignedInfo), and an unsigned
        // attribute value holds a line break: `a b` as parsed, `ab` once normalized.
        let lineBreaks = Fixtures.issue(.assertion) { $0.signedInfoLineBreaks = true }
        let xml = lineBreaks.replacingFirst("<samlp:Status>", with: "<samlp:Status x=\"a\nb\">")
        #expect(Fixtures.code(xml) == nil)
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
        #expect(try Fixtures.forwarded(lineBreaks).get().normalization == .equivalent)
    }

    @Test func whitespaceOnlyChangesAreEquivalentAndIdentityComesFromTheNormalizedDocument() throws {
        let xml = Fixtures.issue(.both) { $0.pretty = true }
        let verified = try Fixtures.forwarded(xml).get()
        #expect(verified.normalization == .equivalent)
        #expect(verified.nameID == "alice@example.com")
        #expect(verified.attributes["channelID"] == ["ESPN", "HBO"])
    }

    @Test func failuresReportTheOriginalsVerdict() throws {
        let forged = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP) { $0.pretty = true }
        #expect(Self.refusal(forged) == .keyNotTrusted)
        let expired = Fixtures.issue(.assertion) {
            $0.pretty = true
            $0.now = Date().addingTimeInterval(-86_400 * 3)
        }
        #expect(Self.refusal(expired) == .expired)
    }
}
