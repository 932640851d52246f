import CLITestSupport
import Foundation
import TestIdP
import Testing

@testable import SAMLVerification

/// The trusted key is chosen on `SignedInfo` before any digest (natively, or before xmlsec's
/// pass when the shape goes to xmlsec): one pass per signature whatever the number of trusted
/// keys, and a response signed by anyone else is refused without canonicalizing what it signs.
@Suite struct KeySelectionTests {
    /// Four trusted keys, the signer's last.
    static let keys = [Fixtures.attackerPair, Fixtures.rotatedPair, Fixtures.ecPair, Fixtures.rsaPair]

    /// `body` run on this thread, with the native canonicalizations it caused.
    static func counting(_ body: () -> Void) throws -> Int {
        let context = try VerificationThreadContext.current()
        let before = context.nativeCanonicalizations
        body()
        return context.nativeCanonicalizations - before
    }

    @Test(arguments: [SignTarget.assertion, .both])
    func theSigningKeyIsFoundBeforeAnyDigest(_ sign: SignTarget) throws {
        let verifier = Fixtures.verifier(Self.keys)
        let xml = Fixtures.issue(sign)
        var verified: VerifiedResponse?
        let passes = try Self.counting { verified = Fixtures.accept(xml, verifier) }
        // SignedInfo and the reference, once per signature: no pass with the three other keys.
        #expect(passes == (sign == .both ? 4 : 2))
        #expect(verified?.keyFingerprint == (try TrustedKey(pem: Fixtures.rsaPair.certificatePEM).shortFingerprint))
    }

    @Test func anECDSASignatureAmongRSAKeys() {
        let xml = Fixtures.issue(.assertion, idp: Fixtures.ecIdP)
        #expect(Fixtures.code(xml, Fixtures.verifier(Self.keys)) == nil)
        #expect(Fixtures.code(xml, Fixtures.verifier([Fixtures.rsaPair, Fixtures.attackerPair])) == .keyNotTrusted)
    }

    @Test func aLargeResponseSignedByAnotherKeyCostsNoDigest() throws {
        // 200 KB, past the libxml2 safety net's size: refused on SignedInfo alone.
        let forged = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP) { $0.padToSize = 200_000 }
        let verifier = Fixtures.verifier([Fixtures.rsaPair, Fixtures.rotatedPair, Fixtures.ecPair])
        var code: VerificationError.Code?
        let passes = try Self.counting { code = Fixtures.code(forged, verifier) }
        #expect(code == .keyNotTrusted)
        #expect(passes == 0)
        // A small one too: the signature is checked natively, SignedInfo first, and no second
        // pass with libxml2 follows a native verdict.
        let small = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP)
        let smallPasses = try Self.counting { code = Fixtures.code(small, verifier) }
        #expect(code == .keyNotTrusted)
        #expect(smallPasses == 0)
    }

    @Test func whenTheNativeCanonicalizerDeclinesLibxml2ChoosesTheKey() {
        // A namespace URI with a port anywhere makes the native canonicalizer decline the document.
        func declined(_ xml: String) -> String {
            xml.replacingFirst("<samlp:Response ", with: "<samlp:Response xmlns:r=\"http://ns.example:8080/r\" ")
        }
        let verifier = Fixtures.verifier(Self.keys)
        #expect(Fixtures.code(declined(Fixtures.issue(.both)), verifier) == nil)
        let forged = declined(Fixtures.issue(.assertion, idp: Fixtures.attackerIdP) { $0.padToSize = 200_000 })
        #expect(Fixtures.code(forged, Fixtures.verifier([Fixtures.rsaPair, Fixtures.ecPair])) == .keyNotTrusted)
    }

    @Test func aSignatureValueThatIsNotBase64IsInvalidWithoutAnyDigest() throws {
        let genuine = Fixtures.issue(.assertion) { $0.padToSize = 200_000 }
        let start = genuine.range(of: "<ds:SignatureValue>")!.upperBound
        let broken = genuine.replacingCharacters(in: start..<genuine.index(start, offsetBy: 4), with: "!!!!")
        var code: VerificationError.Code?
        let passes = try Self.counting { code = Fixtures.code(broken, Fixtures.verifier(Self.keys)) }
        #expect(code == .signatureInvalid)
        #expect(passes == 0)
    }

    @Test func aTamperedResponseIsStillADigestMismatch() {
        let tampered = Fixtures.issue(.assertion).replacingFirst("alice@example.com", with: "mallory@example.com")
        #expect(Fixtures.code(tampered, Fixtures.verifier(Self.keys)) == .signatureInvalid)
    }
}
