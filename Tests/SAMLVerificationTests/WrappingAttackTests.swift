import SAMLVerification
import TestIdP
import Testing

/// The eight classic XML signature-wrapping variants (Somorovsky et al., "On Breaking SAML",
/// 2012), built from genuinely signed responses by moving the signed element and inserting
/// an evil one, plus single-assertion variants that get past the counting defences.
@Suite struct WrappingAttackTests {
    static let evilUser = "mallory@evil.example"

    /// A response-signed document and its parts.
    struct Signed {
        let xml: String
        var response: String { xml.responseElement }
        var assertion: String { xml.assertionElement }
        var signature: String { xml.signatureElement }
    }

    func responseSigned() -> Signed { Signed(xml: Fixtures.issue(.response)) }
    func assertionSigned() -> Signed { Signed(xml: Fixtures.issue(.assertion)) }

    /// The evil twin of an assertion: NameID replaced, new ID, its signature removed.
    func evil(_ assertion: String, id: String = "_evil", keepSignature: Bool = false) -> String {
        var result =
            assertion
            .replacingFirst("alice@example.com", with: Self.evilUser)
            .replacingFirst("ID=\"\(assertion.assertionID)\"", with: "ID=\"\(id)\"")
        if !keepSignature, result.contains("<ds:Signature") {
            result = result.removingFirst(result.signatureElement)
        }
        return result
    }

    @Test func baselineVerifies() {
        #expect(Fixtures.code(responseSigned().xml) == nil)
        #expect(Fixtures.code(assertionSigned().xml) == nil)
    }

    @Test func xsw1OriginalResponseInsideClonedSignature() {
        let s = responseSigned()
        let original = s.response.removingFirst(s.signature)
        let signatureWithOriginal = s.signature.replacingFirst("</ds:Signature>", with: original + "</ds:Signature>")
        let attack = s.xml
            .replacingFirst("ID=\"\(s.xml.responseID)\"", with: "ID=\"_evilResponse\"")
            .replacingFirst(s.assertion, with: evil(s.assertion))
            .replacingFirst(s.signature, with: signatureWithOriginal)
        // Two assertions (the evil one and the original inside the Signature).
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw1WithoutEvilAssertionStillRejected() {
        // The attacker keeps only the original (signed) response, wrapped inside a new root.
        let s = responseSigned()
        let original = s.response.removingFirst(s.signature)
        let signatureWithOriginal = s.signature.replacingFirst("</ds:Signature>", with: original + "</ds:Signature>")
        let attack = s.xml
            .replacingFirst("ID=\"\(s.xml.responseID)\"", with: "ID=\"_evilResponse\"")
            .removingFirst(s.assertion)
            .replacingFirst(s.signature, with: signatureWithOriginal)
        // The only Assertion is not a direct child of the root Response.
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw2OriginalResponseBeforeSignature() {
        let s = responseSigned()
        let original = s.response.removingFirst(s.signature)
        let attack = s.xml
            .replacingFirst("ID=\"\(s.xml.responseID)\"", with: "ID=\"_evilResponse\"")
            .replacingFirst(s.assertion, with: evil(s.assertion, id: s.xml.assertionID))
            .replacingFirst(s.signature, with: original + s.signature)
        // The evil assertion keeps the original assertion's ID: two elements claim it.
        #expect(Fixtures.code(attack) == .duplicateID)
    }

    @Test func xsw3EvilAssertionBeforeOriginal() {
        let s = assertionSigned()
        let attack = s.xml.replacingFirst(s.assertion, with: evil(s.assertion) + s.assertion)
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw3SameIDIsDuplicate() {
        let s = assertionSigned()
        let attack = s.xml.replacingFirst(s.assertion, with: evil(s.assertion, id: s.xml.assertionID) + s.assertion)
        #expect(Fixtures.code(attack) == .duplicateID)
    }

    @Test func xsw4EvilAssertionWrapsOriginal() {
        let s = assertionSigned()
        let wrapper = evil(s.assertion).replacingFirst("</saml:Assertion>", with: s.assertion + "</saml:Assertion>")
        let attack = s.xml.replacingFirst(s.assertion, with: wrapper)
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw5EvilAssertionCarriesCopiedSignatureOriginalAppended() {
        let s = assertionSigned()
        let originalUnsigned = s.assertion.removingFirst(s.signature)
        let attack = s.xml
            .replacingFirst(s.assertion, with: evil(s.assertion, keepSignature: true))
            .replacingFirst("</samlp:Response>", with: originalUnsigned + "</samlp:Response>")
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw6OriginalInsideCopiedSignatureOfEvilAssertion() {
        let s = assertionSigned()
        let originalUnsigned = s.assertion.removingFirst(s.signature)
        let evilAssertion = evil(s.assertion, keepSignature: true)
        let evilWithOriginal = evilAssertion.replacingFirst("</ds:Signature>", with: originalUnsigned + "</ds:Signature>")
        let attack = s.xml.replacingFirst(s.assertion, with: evilWithOriginal)
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw7OriginalInsideExtensions() {
        let s = assertionSigned()
        let extensions = "<samlp:Extensions>" + s.assertion + "</samlp:Extensions>"
        let attack = s.xml.replacingFirst(s.assertion, with: extensions + evil(s.assertion))
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func xsw8OriginalInsideObjectOfCopiedSignature() {
        let s = assertionSigned()
        let originalUnsigned = s.assertion.removingFirst(s.signature)
        let evilAssertion = evil(s.assertion, keepSignature: true)
        let withObject = evilAssertion.replacingFirst("</ds:Signature>", with: "<ds:Object>" + originalUnsigned + "</ds:Object></ds:Signature>")
        let attack = s.xml.replacingFirst(s.assertion, with: withObject)
        #expect(Fixtures.code(attack) == .assertionCount)
    }

    @Test func singleEvilAssertionWithMovedSignatureIsReferenceMismatch() {
        // Only one assertion (the evil one, new ID) carrying the original signature.
        let s = assertionSigned()
        let attack = s.xml.replacingFirst(s.assertion, with: evil(s.assertion, keepSignature: true))
        #expect(Fixtures.code(attack) == .referenceMismatch)
    }

    @Test func singleEvilAssertionWithOriginalIDIsDigestMismatch() {
        let s = assertionSigned()
        let attack = s.xml.replacingFirst(s.assertion, with: evil(s.assertion, id: s.xml.assertionID, keepSignature: true))
        #expect(Fixtures.code(attack) == .signatureInvalid)
    }

    @Test func xmlIDAttributeCannotHijackTheReference() {
        // libxml2 registers xml:id while parsing; an element claiming the assertion's ID that
        // way must not become the referenced element.
        let s = assertionSigned()
        let hijack = "<samlp:Extensions><x xml:id=\"\(s.xml.assertionID)\">evil</x></samlp:Extensions>"
        let attack = s.xml.replacingFirst("<samlp:Status>", with: hijack + "<samlp:Status>")
        #expect(Fixtures.code(attack) == .duplicateID)
    }

    @Test func signatureDeeperInsideTheAssertionIsIgnored() {
        // A signature that is not a direct child of the Response or Assertion is never used.
        let s = assertionSigned()
        let moved = s.xml.removingFirst(s.signature)
            .replacingFirst("</saml:Subject>", with: "<saml:SubjectConfirmation>" + s.signature + "</saml:SubjectConfirmation></saml:Subject>")
        #expect(Fixtures.code(moved) == .signatureMissing)
    }
}
