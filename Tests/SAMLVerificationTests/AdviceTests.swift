import CLITestSupport
import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Assertions inside the signed Assertion's `saml:Advice` (SAML Core §2.6; PEFIM sends them):
/// not a second assertion, never the subject, attributes or conditions reported, covered by the
/// outer signature — and every wrapping that now passes the count refused for its own reason.
@Suite("Advice assertions")
struct AdviceTests {
    static let advised = "advised@other.example"

    static func issue(_ sign: SignTarget) -> String {
        Fixtures.issue(sign) { $0.adviceSubjects = [advised] }
    }

    /// The outer Assertion: from its opening tag to its last closing one (the Advice's own
    /// `</saml:Assertion>` comes first).
    static func outerAssertion(_ xml: String) -> String {
        let start = xml.range(of: "<saml:Assertion")!.lowerBound
        let end = xml.range(of: "</saml:Assertion>", options: .backwards)!.upperBound
        return String(xml[start..<end])
    }

    static func advice(_ xml: String) -> String {
        let start = xml.range(of: "<saml:Advice>")!.lowerBound
        let end = xml.range(of: "</saml:Advice>")!.upperBound
        return String(xml[start..<end])
    }

    @Test(
        "accepted whichever element is signed; the outer Assertion's subject and attributes only",
        arguments: [SignTarget.assertion, .response, .both])
    func accepted(_ sign: SignTarget) throws {
        let xml = Self.issue(sign)
        #expect(xml.components(separatedBy: "<saml:Assertion ").count == 3)
        let verified = try #require(Fixtures.accept(xml))
        #expect(verified.nameID == "alice@example.com")
        #expect(verified.attributes["advised"] == nil)
        #expect(!verified.attributes.values.joined().contains(Self.advised))
    }

    @Test("an assertion added to a signed Advice breaks the signature")
    func addedToAdvice() {
        for sign in [SignTarget.assertion, .response] {
            let xml = Self.issue(sign)
            let advice = Self.advice(xml)
            let second = advice.replacingFirst("<saml:Advice>", with: "").replacingFirst("</saml:Advice>", with: "")
                .replacingFirst("-advice0\"", with: "-advice1\"")
            let grown = xml.replacingFirst(advice, with: advice.replacingFirst("</saml:Advice>", with: second + "</saml:Advice>"))
            #expect(Fixtures.code(grown) == .signatureInvalid, "\(sign)")
        }
    }

    @Test("the signed Assertion moved into the Advice of an unsigned one: refused, no longer by the count")
    func signedMovedIntoAdvice() {
        let xml = Self.issue(.assertion)
        let genuine = Self.outerAssertion(xml)
        let evil = Fixtures.issue(.none, user: "mallory@evil.example")
        let evilAssertion = Self.outerAssertion(evil).replacingFirst("ID=\"", with: "ID=\"_evil")
        let wrapped = evilAssertion.replacingFirst("<saml:AuthnStatement", with: "<saml:Advice>" + genuine + "</saml:Advice><saml:AuthnStatement")
        let attack = xml.replacingFirst(genuine, with: wrapped)
        // The outer Assertion is the Response's own, and nothing signs it.
        #expect(Fixtures.code(attack) == .signatureMissing)
    }

    @Test("an Assertion in an Advice anywhere but the outer Assertion's child, or beside the Response's own: still the count")
    func elsewhere() {
        let xml = Self.issue(.assertion)
        // Moved out of the outer Assertion, the advice needs the prefixes declared there.
        let advice = Self.advice(xml).replacingFirst(
            "<saml:Assertion ",
            with: "<saml:Assertion xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" ")
        let inner = advice.replacingFirst("<saml:Advice>", with: "").replacingFirst("</saml:Advice>", with: "")
        // Inside the Subject, under an element named Advice.
        let underSubject = xml.replacingFirst(Self.advice(xml), with: "").replacingFirst("</saml:Subject>", with: advice + "</saml:Subject>")
        #expect(Fixtures.code(underSubject) == .assertionCount)
        // In the Response's Extensions, wrapped in an Advice.
        let inExtensions = xml.replacingFirst(Self.advice(xml), with: "")
            .replacingFirst("<samlp:Status>", with: "<samlp:Extensions>" + advice + "</samlp:Extensions><samlp:Status>")
        #expect(Fixtures.code(inExtensions) == .assertionCount)
        // Taken out of the Advice and set beside the Response's own.
        let beside = xml.replacingFirst(Self.advice(xml), with: "").replacingFirst("</samlp:Response>", with: inner + "</samlp:Response>")
        #expect(Fixtures.code(beside) == .assertionCount)
    }
}
