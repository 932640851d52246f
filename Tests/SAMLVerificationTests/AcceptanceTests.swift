import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Genuine responses in every supported shape must verify, with the right content.
@Suite struct AcceptanceTests {
    @Test(arguments: [SignTarget.response, .assertion, .both])
    func rsa(_ sign: SignTarget) throws {
        let verified = try #require(Fixtures.accept(Fixtures.issue(sign)))
        #expect(verified.signed.rawValue == sign.rawValue)
        #expect(verified.nameID == "alice@example.com")
        #expect(verified.attributes["userID"] == ["u-12345"])
        #expect(verified.attributes["channelID"] == ["ESPN", "HBO"])
        #expect(verified.issuer == "https://idp.testmvpd.example.com/saml2/idp")
        #expect(verified.audience == "https://saml.sp.auth.adobe.com")
        #expect(verified.mvpd == Fixtures.mvpd)
        #expect(verified.notOnOrAfter != nil && verified.notBefore != nil && verified.sessionNotOnOrAfter != nil)
        #expect(verified.survivesNormalization == nil)
        #expect(try Fixtures.forwarded(Fixtures.issue(sign)).get().survivesNormalization == true)
    }

    @Test(arguments: [SignTarget.response, .assertion, .both])
    func p256(_ sign: SignTarget) throws {
        let verified = try #require(Fixtures.accept(Fixtures.issue(sign, idp: Fixtures.ecIdP), Fixtures.verifier([Fixtures.ecPair])))
        #expect(verified.signed.rawValue == sign.rawValue)
        #expect(verified.nameID == "alice@example.com")
    }

    @Test func prettyPrinted() throws {
        let xml = Fixtures.issue(.both) { $0.pretty = true }
        #expect(xml.contains("\n  <saml:Issuer>"))
        let verified = try #require(Fixtures.accept(xml))
        #expect(verified.nameID == "alice@example.com")
        #expect(verified.signed == .both)
        // Indentation inside the signed element is removed by normalization: the digest changes,
        // and the normalized document is the same tree with only whitespace changed.
        let forwarded = try Fixtures.forwarded(xml).get()
        #expect(forwarded.survivesNormalization == false)
        #expect(forwarded.normalization == .equivalent)
        #expect(forwarded.nameID == "alice@example.com")
    }

    /// `NameID` and `AttributeValue` are `xs:string`: reported as the document says them, blanks
    /// at their ends included; the `Issuer` (an entity id) is compared without them.
    @Test(arguments: [" alice@example.com", "alice@example.com\t", " ", "  "])
    func valuesByteForByte(_ user: String) throws {
        let xml = Fixtures.issue(.assertion, user: user) { options in
            options.attributes = [SAMLAttribute(name: "channelID", values: [" ESPN", "HBO ", " "])]
            options.issuer = " https://idp.testmvpd.example.com/saml2/idp "
        }
        let verified = try #require(Fixtures.accept(xml))
        #expect(verified.nameID == user)
        #expect(verified.attributes["channelID"] == [" ESPN", "HBO ", " "])
        #expect(verified.issuer == "https://idp.testmvpd.example.com/saml2/idp")
        // Forwarded, the document is the cookbook's normalization, and so is what it says.
        let forwarded = try Fixtures.forwarded(xml).get()
        let normalized = Fixtures.normalizedValue(user)
        #expect(normalized == user ? forwarded.normalization != .equivalent : forwarded.normalization == .equivalent)
        #expect(forwarded.nameID == normalized)
        #expect(forwarded.attributes["channelID"] == [" ESPN", "HBO ", " "])
    }

    @Test func keyRotation() throws {
        // The store holds the next key first and the current key second; both verify.
        let store = [Fixtures.rotatedPair, Fixtures.rsaPair]
        let verified = try #require(Fixtures.accept(Fixtures.issue(.both), Fixtures.verifier(store)))
        #expect(verified.keySource.hasSuffix("#1"))
        let next = try TestIdentityProvider(keyPair: Fixtures.rotatedPair)
        #expect(Fixtures.code(try next.issueString(Fixtures.options(.assertion)), Fixtures.verifier(store)) == nil)
        // Mixed RSA and EC keys in one store.
        #expect(Fixtures.code(Fixtures.issue(.assertion, idp: Fixtures.ecIdP), Fixtures.verifier([Fixtures.rsaPair, Fixtures.ecPair])) == nil)
        #expect(Fixtures.code(Fixtures.issue(.assertion), Fixtures.verifier([Fixtures.ecPair, Fixtures.rsaPair])) == nil)
    }

    @Test func survivesNormalization() throws {
        #expect(try Fixtures.forwarded(Fixtures.issue(.assertion)).get().survivesNormalization == true)
        #expect(try Fixtures.forwarded(Fixtures.issue(.both)).get().survivesNormalization == true)
        let lineBreaks = Fixtures.issue(.assertion) { $0.signedInfoLineBreaks = true }
        #expect(lineBreaks.element("<ds:SignedInfo>", "</ds:SignedInfo>").contains("\n"))
        #expect(!lineBreaks.assertionElement.removingFirst(lineBreaks.signatureElement).contains("\n"))
        let broken = try Fixtures.forwarded(lineBreaks).get()
        #expect(broken.survivesNormalization == false)
        #expect(broken.normalization == .equivalent)
        #expect(try Fixtures.forwarded(lineBreaks, fallback: .original).get().normalization == .original)
        // Whitespace outside the signed element changes bytes but not the verdict.
        let outside = Fixtures.issue(.assertion).replacingFirst("<samlp:Status>", with: "\n\t <samlp:Status>")
        let verified = try Fixtures.forwarded(outside).get()
        #expect(verified.normalization == .verified)
        // Not computed when exactly the given bytes are verified.
        #expect(try #require(Fixtures.accept(lineBreaks)).survivesNormalization == nil)
    }

    @Test(arguments: [3 * 1024, 8 * 1024, 64 * 1024])
    func paddedSizes(_ size: Int) throws {
        // The smallest fixtures leave out KeyInfo and attributes (a 2048-bit certificate alone
        // is 1.2 KB of base64); padding only ever adds.
        let xml = Fixtures.issue(.assertion) { options in
            options.padToSize = size
            if size < 4096 {
                options.keyInfo = .none
                options.attributes = [SAMLAttribute("userID", "u-12345")]
            }
        }
        #expect(abs(xml.utf8.count - size) < 300)
        let verified = try #require(Fixtures.accept(xml))
        #expect(verified.attributes["userID"] == ["u-12345"])
    }

    @Test func rawBufferAPI() throws {
        let bytes = Array(Fixtures.issue(.assertion).utf8)
        let verified = try bytes.withUnsafeBytes { try Fixtures.verifier().verify($0, mvpd: Fixtures.mvpd) }
        #expect(verified.nameID == "alice@example.com")
    }
}
