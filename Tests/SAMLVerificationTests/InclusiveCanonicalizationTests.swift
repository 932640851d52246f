import CLITestSupport
import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Inclusive C14N 1.0 and 1.1 (`SignedInfo` and `Reference`), accepted by default through
/// libxml2's canonicalizer, refused when a verifier is restricted to exclusive C14N — and the
/// wrapping defences unchanged for them.
///
/// What inclusive C14N changes for an attacker: the canonical form of a signed element carries
/// every namespace declaration in scope and the `xml:` attributes of its ancestors, so the
/// signature also covers that context. An assertion moved under other ancestors verifies only
/// where the context is the same; altering an ancestor's declarations breaks it. The structural
/// defences (one Assertion, a direct child of the Response, IDs registered by samlgate, a
/// reference to the element the signature sits in) do not depend on the canonicalization.
@Suite struct InclusiveCanonicalizationTests {
    static let inclusive: [CanonicalizationAlgorithm] = [.inclusive10, .inclusive10WithComments, .inclusive11, .inclusive11WithComments]
    static let exclusiveOnly = Fixtures.verifier { $0.allowInclusiveCanonicalization = false }

    static func issue(
        _ method: CanonicalizationAlgorithm, _ sign: SignTarget = .assertion, _ configure: (inout IssueOptions) -> Void = { _ in }
    )
        -> String
    {
        Fixtures.issue(sign) {
            $0.canonicalization = method
            configure(&$0)
        }
    }

    @Test(arguments: inclusive, [SignTarget.assertion, .response, .both])
    func acceptedByDefault(_ method: CanonicalizationAlgorithm, _ sign: SignTarget) {
        let xml = Self.issue(method, sign)
        let verified = Fixtures.accept(xml)
        #expect(verified?.nameID == "alice@example.com")
        #expect(verified?.signed == (sign == .assertion ? .assertion : sign == .response ? .response : .both))
        #expect(Fixtures.code(xml, Fixtures.verifier { $0.nativeCanonicalization = false }) == nil)
    }

    @Test(arguments: inclusive)
    func refusedWhenRestrictedToExclusive(_ method: CanonicalizationAlgorithm) {
        #expect(Fixtures.code(Self.issue(method, .both), Self.exclusiveOnly) == .algorithmNotAllowed)
        // Exclusive C14N with comments is exclusive C14N.
        #expect(Fixtures.code(Self.issue(.exclusiveWithComments, .both), Self.exclusiveOnly) == nil)
    }

    @Test func aReferenceWithoutCanonicalizationIsInclusive10() {
        // Only the enveloped transform: XML Signature applies inclusive C14N 1.0 (xmlsec inserts
        // it without consulting its enabled list), so the restriction must refuse it by name.
        let implicit = Fixtures.issue(.both) { $0.implicitReferenceCanonicalization = true }
        #expect(!implicit.contains("Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\""))
        #expect(Fixtures.accept(implicit)?.nameID == "alice@example.com")
        #expect(Fixtures.code(implicit, Self.exclusiveOnly) == .algorithmNotAllowed)
    }

    @Test func exclusiveSignedInfoWithAnInclusiveReference() {
        // SignedInfo exclusive (native), the Reference inclusive (libxml2): each side its own.
        let xml = Fixtures.issue(.assertion).replacingFirst(
            "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"><ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\"xs\"/></ds:Transform>",
            with: "<ds:Transform Algorithm=\"http://www.w3.org/TR/2001/REC-xml-c14n-20010315\"/>")
        // Changing the transform changes the digest (and SignedInfo).
        #expect(Fixtures.code(xml) == .signatureInvalid)
        #expect(Fixtures.code(xml, Self.exclusiveOnly) == .algorithmNotAllowed)
    }

    @Test(arguments: inclusive)
    func theKeyIsChosenOnAnInclusiveSignedInfo(_ method: CanonicalizationAlgorithm) {
        // With several trusted keys the key is chosen on SignedInfo first: a genuine response
        // verifies only if SignedInfo is canonicalized inclusively (with its ancestors'
        // namespaces) there too; a forged one is refused before any digest.
        let keys = [Fixtures.attackerPair, Fixtures.rotatedPair, Fixtures.rsaPair]
        let sized = Self.issue(method, .both) { $0.padToSize = 60_000 }
        #expect(Fixtures.accept(sized, Fixtures.verifier(keys))?.nameID == "alice@example.com")
        let forged = Fixtures.issue(.both, idp: Fixtures.attackerIdP) {
            $0.canonicalization = method
            $0.padToSize = 60_000
        }
        #expect(Fixtures.code(forged, Fixtures.verifier([Fixtures.rsaPair, Fixtures.rotatedPair])) == .keyNotTrusted)
    }

    /// libxml2 canonicalizes inclusive C14N at up to 15 times the cost of a genuine response of
    /// the same size on hostile markup (the Adversarial benchmark's `inclusive-*` rows), so it is
    /// taken for documents up to 64 KiB only; exclusive C14N has no such bound.
    @Test(arguments: inclusive)
    func inclusiveOnlyForDocumentsUpTo64KiB(_ method: CanonicalizationAlgorithm) throws {
        let large = Self.issue(method, .both) { $0.padToSize = 100_000 }
        do {
            _ = try Fixtures.verifier().verify(Array(large.utf8), mvpd: Fixtures.mvpd)
            Issue.record("a \(large.utf8.count)-byte inclusive response was accepted")
        } catch {
            #expect(error.code == .algorithmNotAllowed)
            #expect(error.message.contains("up to 64 KiB"), "\(error.message)")
        }
        #expect(Fixtures.accept(Fixtures.issue(.both) { $0.padToSize = 100_000 })?.nameID == "alice@example.com")
    }

    @Test(arguments: inclusive)
    func contentChangesAreCaught(_ method: CanonicalizationAlgorithm) {
        for sign in [SignTarget.assertion, .response] {
            let xml = Self.issue(method, sign)
            #expect(Fixtures.code(xml.replacingFirst("alice@example.com", with: "mallory@example.com")) == .signatureInvalid)
        }
    }

    // MARK: the ancestors' context is signed

    @Test(arguments: inclusive)
    func anAncestorNamespaceAddedBreaksTheAssertionSignature(_ method: CanonicalizationAlgorithm) {
        // Only the Assertion is signed; its canonical form includes the Response's declarations.
        let added = Self.issue(method).replacingFirst("<samlp:Response ", with: "<samlp:Response xmlns:evil=\"urn:evil\" ")
        #expect(Fixtures.code(added) == .signatureInvalid)
        // With exclusive C14N an unused declaration is outside what is signed, and harmless.
        let exclusive = Fixtures.issue(.assertion).replacingFirst("<samlp:Response ", with: "<samlp:Response xmlns:evil=\"urn:evil\" ")
        #expect(Fixtures.code(exclusive) == nil)
    }

    @Test(arguments: inclusive)
    func anAncestorNamespaceMovedDroppedOrRebound(_ method: CanonicalizationAlgorithm) {
        let xml = Self.issue(method)
        // The Assertion redeclares nothing: `saml` comes from the Response. Declaring the same
        // binding again on the Assertion and dropping it from the Response keeps the context.
        let moved =
            xml
            .replacingFirst(" xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\"", with: "")
            .replacingFirst("<saml:Issuer>", with: "<saml:Issuer xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\">")
            .replacingFirst("<saml:Assertion ", with: "<saml:Assertion xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" ")
        #expect(Fixtures.code(moved) == nil)
        // Dropping it from the Response without declaring it on the Assertion is not
        // namespace-well-formed any more.
        let dropped = xml.replacingFirst(" xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\"", with: "")
        #expect(Fixtures.code(dropped) == .malformedXML)
        // Rebinding `samlp` to another URI on the Assertion's way changes what is signed.
        let rebound = xml.replacingFirst("<saml:Assertion ", with: "<saml:Assertion xmlns:samlp=\"urn:evil\" ")
        #expect(Fixtures.code(rebound) == .signatureInvalid)
    }

    @Test(arguments: [CanonicalizationAlgorithm.inclusive10, .inclusive11])
    func anAncestorXMLAttributeIsSigned(_ method: CanonicalizationAlgorithm) {
        // C14N 1.0 and 1.1 both carry an ancestor's xml:lang onto the signed element.
        let xml = Self.issue(method).replacingFirst("<samlp:Response ", with: "<samlp:Response xml:lang=\"fr\" ")
        #expect(Fixtures.code(xml) == .signatureInvalid)
    }

    // MARK: a signed assertion moved

    @Test(arguments: inclusive)
    func anAssertionMovedIntoAnotherResponse(_ method: CanonicalizationAlgorithm) {
        let genuine = Self.issue(method)
        let assertion = genuine.assertionElement
        let other = Fixtures.issue(.assertion) { $0.user = "mallory@evil.example" }
        // The same namespace context around it: the signature still verifies (only the
        // Assertion was signed, and the Response's values are unsigned), and the replay cache
        // sees the same assertion again.
        let transplanted = other.replacingFirst(other.assertionElement, with: assertion)
        let cache = InMemoryReplayCache()
        let verifier = Fixtures.verifier(replay: cache)
        #expect(Fixtures.code(genuine, verifier) == nil)
        #expect(Fixtures.code(transplanted, verifier) == .replayed)
        // Another context around it — one more declaration on the new Response — breaks it.
        let otherContext = transplanted.replacingFirst("<samlp:Response ", with: "<samlp:Response xmlns:x=\"urn:x\" ")
        #expect(Fixtures.code(otherContext) == .signatureInvalid)
    }

    @Test(arguments: inclusive)
    func classicWrappingIsRefusedStructurally(_ method: CanonicalizationAlgorithm) {
        let genuine = Self.issue(method)
        let assertion = genuine.assertionElement
        let evil = assertion.replacingFirst("alice@example.com", with: "mallory@evil.example")
            .replacingFirst("ID=\"\(genuine.assertionID)\"", with: "ID=\"_evil\"")
            .removingFirst(assertion.signatureElement)
        // The original, still verifying in the same namespace context, hidden in Extensions
        // (samlp is declared on the Response, so nothing changes around it).
        let inExtensions = genuine.replacingFirst(
            assertion, with: "<samlp:Extensions>" + assertion + "</samlp:Extensions>" + evil)
        #expect(Fixtures.code(inExtensions) == .assertionCount)
        // The evil one first, the original after it.
        #expect(Fixtures.code(genuine.replacingFirst(assertion, with: evil + assertion)) == .assertionCount)
        // The original inside the evil one's Subject.
        let nested = evil.replacingFirst("</saml:Subject>", with: assertion + "</saml:Subject>")
        #expect(Fixtures.code(genuine.replacingFirst(assertion, with: nested)) == .assertionCount)
        // The evil one keeping the original's ID, the original in Extensions.
        let twin = evil.replacingFirst("ID=\"_evil\"", with: "ID=\"\(genuine.assertionID)\"")
        let duplicated = genuine.replacingFirst(assertion, with: "<samlp:Extensions>" + assertion + "</samlp:Extensions>" + twin)
        #expect([.duplicateID, .assertionCount].contains(Fixtures.code(duplicated)))
    }

    @Test(arguments: inclusive)
    func aResponseSignatureOverAMovedResponse(_ method: CanonicalizationAlgorithm) {
        // XSW1 with an inclusive Response signature: the signed Response moved into the
        // Signature of a new one whose ID differs.
        let genuine = Self.issue(method, .response)
        let signature = genuine.signatureElement
        let original = genuine.responseElement.removingFirst(signature)
        let attack =
            genuine
            .replacingFirst("ID=\"\(genuine.responseID)\"", with: "ID=\"_evilResponse\"")
            .replacingFirst("alice@example.com", with: "mallory@evil.example")
            .replacingFirst(signature, with: signature.replacingFirst("</ds:Signature>", with: original + "</ds:Signature>"))
        // The original Assertion's ID twice.
        #expect(Fixtures.code(attack) == .duplicateID)
        let renamed = attack.replacingFirst("ID=\"\(genuine.assertionID)\"", with: "ID=\"_evil\"")
        #expect(Fixtures.code(renamed) == .assertionCount)
    }
}
