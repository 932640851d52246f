import CLITestSupport
import Foundation
import SAMLVerification
import TestIdP
import Testing

/// `Reference URI=""` — the whole document — on the Response's own signature, as some identity
/// providers sign: accepted when that signature is a direct child of the document element and
/// removes itself with the enveloped-signature transform; the signed content is then the whole
/// Response, its Assertion included. Anywhere else an empty URI stays `reference_mismatch`.
///
/// What an attacker can do with such a signature: the digest covers the document minus the
/// signature and minus comments, so the signature itself can be moved anywhere without breaking
/// its digest, and comments can be added. The tests move it, add comments, add elements, and
/// add signatures.
@Suite struct WholeDocumentReferenceTests {
    static let methods: [CanonicalizationAlgorithm] = [.exclusive, .inclusive10, .inclusive11WithComments]

    static func issue(
        _ sign: SignTarget = .response, _ method: CanonicalizationAlgorithm = .exclusive, _ configure: (inout IssueOptions) -> Void = { _ in }
    ) -> String {
        Fixtures.issue(sign) {
            $0.wholeDocumentReference = true
            $0.canonicalization = method
            configure(&$0)
        }
    }

    @Test(arguments: methods, [SignTarget.response, .both])
    func accepted(_ method: CanonicalizationAlgorithm, _ sign: SignTarget) {
        let xml = Self.issue(sign, method)
        #expect(xml.contains("<ds:Reference URI=\"\">"))
        let verified = Fixtures.accept(xml)
        #expect(verified?.nameID == "alice@example.com")
        #expect(verified?.signed == (sign == .both ? .both : .response))
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.nativeCanonicalization = false }) == nil)
        // As the gateway forwards it, too.
        #expect((try? Fixtures.forwarded(xml).get())?.nameID == "alice@example.com")
    }

    @Test func exclusiveOnlyStillAcceptsItWithExclusiveC14N() {
        let verifier = Fixtures.verifier { $0.allowInclusiveCanonicalization = false }
        #expect(Fixtures.code(Self.issue(), verifier) == nil)
        #expect(Fixtures.code(Self.issue(.response, .inclusive10), verifier) == .algorithmNotAllowed)
        #expect(Fixtures.code(Self.issue(.response) { $0.implicitReferenceCanonicalization = true }, verifier) == .algorithmNotAllowed)
        #expect(Fixtures.code(Self.issue(.response) { $0.implicitReferenceCanonicalization = true }) == nil)
    }

    @Test(arguments: methods)
    func everythingInTheDocumentIsSigned(_ method: CanonicalizationAlgorithm) {
        let xml = Self.issue(.response, method)
        #expect(Fixtures.code(xml.replacingFirst("alice@example.com", with: "mallory@example.com")) == .signatureInvalid)
        // The envelope's attributes, its Status, an element added anywhere.
        #expect(Fixtures.code(xml.replacingFirst("Version=\"2.0\"", with: "Version=\"2.0\" Consent=\"x\"")) == .signatureInvalid)
        let extensions = xml.replacingFirst("<samlp:Status>", with: "<samlp:Extensions><x:y xmlns:x=\"urn:x\"/></samlp:Extensions><samlp:Status>")
        #expect(Fixtures.code(extensions) == .signatureInvalid)
    }

    @Test func theLargeDocumentRulesApply() {
        let keys = [Fixtures.attackerPair, Fixtures.rotatedPair, Fixtures.rsaPair]
        #expect(Fixtures.accept(Self.issue { $0.padToSize = 100_000 }, Fixtures.verifier(keys))?.nameID == "alice@example.com")
        let forged = Fixtures.issue(.response, idp: Fixtures.attackerIdP) {
            $0.wholeDocumentReference = true
            $0.padToSize = 100_000
        }
        #expect(Fixtures.code(forged, Fixtures.verifier([Fixtures.rsaPair, Fixtures.rotatedPair])) == .keyNotTrusted)
    }

    // MARK: where the signature sits

    @Test func movedIntoTheAssertion() {
        // The digest is over the document minus the signature, so it survives the move: the
        // empty URI is refused on the Assertion's signature by name.
        let xml = Self.issue()
        let signature = xml.signatureElement
        let moved = xml.removingFirst(signature).replacingFirst("</saml:Issuer><saml:Subject>", with: "</saml:Issuer>" + signature + "<saml:Subject>")
        #expect(Fixtures.code(moved) == .referenceMismatch)
    }

    @Test func movedOutOfTheResponsesChildren() {
        let xml = Self.issue()
        let signature = xml.signatureElement
        // Into Status, into Extensions: not a signature of anything, so the response is unsigned.
        let inStatus = xml.removingFirst(signature).replacingFirst("</samlp:Status>", with: signature + "</samlp:Status>")
        #expect(Fixtures.code(inStatus) == .signatureMissing)
        let inExtensions = xml.removingFirst(signature).replacingFirst(
            "<samlp:Status>", with: "<samlp:Extensions>" + signature + "</samlp:Extensions><samlp:Status>")
        #expect(Fixtures.code(inExtensions) == .signatureMissing)
    }

    @Test func theAssertionsOwnSignatureMayNotSignTheWholeDocument() {
        // An assertion signature with URI="": a whole-document Response signature moved there,
        // and an assertion signature whose URI was emptied.
        let xml = Self.issue(.both)
        let assertionSignature = xml.assertionElement.signatureElement
        let swapped = xml.replacingFirst(assertionSignature, with: xml.signatureElement)
        #expect(Fixtures.code(swapped) == .referenceMismatch)
        let assertionOnly = Fixtures.issue(.assertion)
        let emptied = assertionOnly.replacingFirst("URI=\"#\(assertionOnly.assertionID)\"", with: "URI=\"\"")
        #expect(Fixtures.code(emptied) == .referenceMismatch)
    }

    @Test func aSecondSignatureOnTheResponse() {
        let xml = Self.issue()
        let signature = xml.signatureElement
        #expect(Fixtures.code(xml.replacingFirst(signature, with: signature + signature)) == .signatureInvalid)
        // The attacker's own whole-document signature beside the genuine one.
        let attacker = Fixtures.issue(.response, idp: Fixtures.attackerIdP) { $0.wholeDocumentReference = true }
        #expect(Fixtures.code(xml.replacingFirst(signature, with: signature + attacker.signatureElement)) == .signatureInvalid)
    }

    @Test func anAssertionSignatureAddedByTheAttacker() {
        // The genuine whole-document signature, plus an assertion signature the attacker made:
        // every signature present must verify, and adding one changes the signed document.
        let xml = Self.issue()
        let attacker = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP)
        let forged = xml.replacingFirst(
            "</saml:Issuer><saml:Subject>", with: "</saml:Issuer>" + attacker.assertionElement.signatureElement + "<saml:Subject>")
        #expect([.keyNotTrusted, .referenceMismatch, .signatureInvalid].contains(Fixtures.code(forged)))
    }

    @Test func aSecondAssertionOrResponse() {
        let xml = Self.issue()
        let assertion = xml.assertionElement
        let evil = assertion.replacingFirst("alice@example.com", with: "mallory@evil.example").replacingFirst(
            "ID=\"\(xml.assertionID)\"", with: "ID=\"_evil\"")
        #expect(Fixtures.code(xml.replacingFirst(assertion, with: evil + assertion)) == .assertionCount)
        #expect(Fixtures.code(xml.replacingFirst(assertion, with: assertion + evil)) == .assertionCount)
        // The whole signed response wrapped inside a new one, whose Assertion is the evil one.
        let signature = xml.signatureElement
        let wrapped =
            xml
            .replacingFirst("ID=\"\(xml.responseID)\"", with: "ID=\"_outer\"")
            .replacingFirst(assertion, with: evil)
            .replacingFirst(
                signature,
                with: signature.replacingFirst("</ds:Signature>", with: "<ds:Object>" + xml.responseElement + "</ds:Object></ds:Signature>"))
        #expect([.assertionCount, .duplicateID, .unsignedContent].contains(Fixtures.code(wrapped)))
    }

    @Test func commentsAreOutsideTheDigestAndCannotShortenTheNameID() {
        let xml = Self.issue()
        let injected = xml.replacingFirst("alice@example.com", with: "alice@<!-- x -->example.com")
        #expect(Fixtures.accept(injected)?.nameID == "alice@example.com")
        let truncating = xml.replacingFirst("alice@example.com", with: "alice@example.com<!---->.evil")
        #expect(Fixtures.code(truncating) == .signatureInvalid)
        let outside = xml.replacingFirst("<samlp:Response ", with: "<!-- before --><samlp:Response ") + "<!-- after -->"
        #expect(Fixtures.accept(outside)?.nameID == "alice@example.com")
    }

    @Test func processingInstructionsAndMissingTransformsAreRefused() {
        let xml = Self.issue()
        #expect(Fixtures.code(xml.replacingFirst("<samlp:Status>", with: "<?evil x?><samlp:Status>")) == .forbiddenMarkup)
        #expect(Fixtures.code(xml + "<?evil x?>") == .forbiddenMarkup)
        // Without the enveloped-signature transform the signature would sign itself.
        let notEnveloped = xml.removingFirst("<ds:Transform Algorithm=\"http://www.w3.org/2000/09/xmldsig#enveloped-signature\"/>")
        #expect(Fixtures.code(notEnveloped) == .referenceMismatch)
        // A Reference without any URI attribute is not the empty URI.
        #expect(Fixtures.code(xml.replacingFirst("<ds:Reference URI=\"\">", with: "<ds:Reference>")) == .referenceMismatch)
    }
}
