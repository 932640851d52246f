import Foundation
import TestIdP
import Testing

@testable import SAMLVerification

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
        let place = Self.hidingPlaces[index]
        let xml = Self.smuggled(place)
        switch place.name {
        case "comment":
            // The original itself is genuine (the forged Assertion is a comment): xmlsec accepts it.
            #expect(try #require(Fixtures.accept(xml)).nameID == "alice@example.com")
            // Its normalization holds two Assertions: never forwarded with a verdict.
            #expect(Self.refusal(xml) == .normalizationChangesDocument)
        case "CDATA":
            // Text in the unsigned envelope: refused in every form.
            #expect(Fixtures.code(xml) == .unsignedContent)
            #expect(Self.refusal(xml) == .unsignedContent)
        default:
            // No response needs a processing instruction: refused before anything else.
            #expect(Fixtures.code(xml) == .forbiddenMarkup)
            #expect(Self.refusal(xml) == .forbiddenMarkup)
        }
    }

    @Test func hiddenAssertionForwardsTheVerifiedOriginalWhenPreservingSignatures() throws {
        let verified = try Fixtures.forwarded(Self.smuggled(Self.hidingPlaces[0]), fallback: .original).get()
        #expect(verified.normalization == .original)
        #expect(verified.nameID == "alice@example.com")
    }

    /// Characters the cookbook's normalization deletes or folds, inside a signed value.
    static let foldedInValues = ["\u{2028}", "\u{2029}", "\u{85}", "\n", "\t", "  ", " \n "]

    @Test(arguments: foldedInValues)
    func aNameIDChangedByNormalizationIsRefused(_ folded: String) throws {
        // The IdP signs `vic<folded>tim@example.com` with line breaks in SignedInfo, so only the
        // original verifies; its normalization names another user (`victim@example.com`).
        let user = "vic\(folded)tim@example.com"
        let xml = Fixtures.issue(.assertion, user: user) { $0.signedInfoLineBreaks = true }
        #expect(try #require(Fixtures.accept(xml)).nameID == user)
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
        let original = try Fixtures.forwarded(xml, fallback: .original).get()
        #expect(original.normalization == .original)
        #expect(original.nameID == user)
    }

    @Test(arguments: foldedInValues)
    func anAttributeValueChangedByNormalizationIsRefused(_ folded: String) throws {
        let xml = Fixtures.issue(.both, user: "alice@example.com") {
            $0.signedInfoLineBreaks = true
            $0.attributes = [SAMLAttribute("userID", "u-1\(folded)2345")]
        }
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
    }

    @Test func aLineBreakBetweenCommentsInsideAValueIsNotLayout() throws {
        // Signed as `vic\ntim@example.com` (comments are not canonicalized): the text nodes are
        // `vic`, `\n`, `tim@example.com` around two comments. The `\n` is whitespace between
        // nodes, but part of a value: normalization would forward `victim@example.com`.
        let signed = Fixtures.issue(.assertion, user: "vic\ntim@example.com") { $0.signedInfoLineBreaks = true }
        let xml = signed.replacingFirst("vic\ntim@", with: "vic<!---->\n<!---->tim@")
        #expect(try #require(Fixtures.accept(xml)).nameID == "vic\ntim@example.com")
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
    }

    @Test func aLineBreakAndABlankBetweenCommentsInsideAValueAreNotItsEnds() throws {
        // `vic`, `\n `, `tim@…`: the middle piece is neither the value's start nor its end.
        let signed = Fixtures.issue(.assertion, user: "vic\n tim@example.com") { $0.signedInfoLineBreaks = true }
        let xml = signed.replacingFirst("vic\n tim@", with: "vic<!---->\n <!---->tim@")
        #expect(try #require(Fixtures.accept(xml)).nameID == "vic\n tim@example.com")
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
    }

    @Test(arguments: ["\n  alice@example.com\n", "alice@example.com\n    ", " \t alice@example.com"])
    func whitespaceAtTheEndsOfAValueIsLayout(_ user: String) throws {
        // Pretty printers (node-saml's fixtures, ruby-saml's Issuers) indent inside values; SAML
        // libraries trim those ends, and the rest of the value is compared byte for byte. The
        // NameID reported is the forwarded document's, as it says it: the cookbook's
        // normalization of the signed one.
        let xml = Fixtures.issue(.assertion, user: user) { $0.signedInfoLineBreaks = true }
        let verified = try Fixtures.forwarded(xml).get()
        #expect(verified.normalization == .equivalent)
        #expect(verified.nameID == Fixtures.normalizedValue(user))
    }

    @Test(arguments: ["alice@example.com\u{2028}", "\u{85}alice@example.com"])
    func lineSeparatorsAtTheEndsOfAValueAreNotXMLWhitespace(_ user: String) throws {
        let xml = Fixtures.issue(.assertion, user: user) { $0.signedInfoLineBreaks = true }
        #expect(Self.refusal(xml) == .normalizationChangesDocument)
    }

    @Test func anEmptyElementWithALineBreakIsLayout() throws {
        // `<saml:AttributeStatement>\n    </saml:AttributeStatement>`, as `idp issue --pretty`
        // writes it without attributes.
        let xml = Fixtures.issue(.assertion) {
            $0.pretty = true
            $0.attributes = []
        }
        #expect(xml.contains("<saml:AttributeStatement>\n"))
        #expect(try Fixtures.forwarded(xml).get().normalization == .equivalent)
    }

    @Test func aLargeResponseSignedByAnotherKeyCostsNoCanonicalization() throws {
        let context = try VerificationThreadContext.current()
        let before = context.nativeCanonicalizations
        let forged = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP) { $0.padToSize = 200_000 } + "\n"
        #expect(Self.refusal(forged) == .keyNotTrusted)
        #expect(context.nativeCanonicalizations == before)
        // A large genuine one is forwarded as below the size.
        let pretty = Fixtures.issue(.both) {
            $0.pretty = true
            $0.padToSize = 200_000
        }
        #expect(try Fixtures.forwarded(pretty).get().normalization == .equivalent)
    }

    @Test func layoutAndBase64WhitespaceStayEquivalent() throws {
        // Pretty-printed, line breaks in SignedInfo and in the base64 values: only layout changes.
        let xml = Fixtures.issue(.both) {
            $0.pretty = true
            $0.signedInfoLineBreaks = true
        }
        let verified = try Fixtures.forwarded(xml).get()
        #expect(verified.normalization == .equivalent)
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
