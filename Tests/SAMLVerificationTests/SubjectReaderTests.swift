import Foundation
import SAMLVerification
import Testing

/// `SubjectReader` (the reference upstream's NameID): the NameID of the Response's one
/// Assertion, from the parsed document — never text a comment or another element offers.
@Suite("Subject reader")
struct SubjectReaderTests {
    enum Read: Equatable {
        case name(String?)
        case refused
    }

    static func read(_ xml: String) -> Read {
        do {
            return .name(try Array(xml.utf8).withUnsafeBytes { bytes in try SubjectReader.nameID(bytes) })
        } catch {
            return .refused
        }
    }

    static func name(_ xml: String) -> String? {
        if case .name(let name) = read(xml) { return name }
        return nil
    }

    static let genuine = Fixtures.issue(user: "alice@example.com")

    @Test("a comment holding a NameID before the Assertion does not pick the identity")
    func commentBeforeAssertion() throws {
        let trick = Self.genuine.replacingOccurrences(of: "<saml:Assertion", with: "<!--<NameID>admin@victim.example<--><saml:Assertion")
        #expect(trick != Self.genuine)
        #expect(Self.name(trick) == "alice@example.com")
        // The gateway verifies that very document, so the reader must agree with the verifier.
        #expect(try Fixtures.verifier().verify(Array(trick.utf8), mvpd: Fixtures.mvpd).nameID == "alice@example.com")
        #expect(Self.name(Self.genuine) == "alice@example.com")
    }

    @Test("a comment or CDATA splitting the NameID does not truncate it; entities are decoded")
    func splitText() {
        let split = Self.genuine.replacingOccurrences(of: "alice@example.com", with: "alice@<!--x-->exam<![CDATA[ple]]>.com")
        #expect(Self.name(split) == "alice@example.com")
        let entity = Self.genuine.replacingOccurrences(of: "alice@example.com", with: "alice&amp;bob@example.com")
        #expect(Self.name(entity) == "alice&bob@example.com")
    }

    @Test("NameIDs elsewhere are not read; shapes the verifier refuses give no identity")
    func elsewhere() {
        // A NameID as a child of the Response, outside the Assertion's Subject: never read, and
        // the unsigned envelope may not carry one at all.
        let nameID = "<saml:NameID xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\">admin@victim.example</saml:NameID>"
        let stray = Self.genuine.replacingOccurrences(of: "<saml:Assertion", with: nameID + "<saml:Assertion")
        #expect(Self.read(stray) == .refused)
        let empty = Self.genuine.replacingOccurrences(of: "alice@example.com", with: "")
        #expect(Self.read(empty) == .name(""))
        let wrapped = "<wrapper>" + Self.genuine.replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", with: "") + "</wrapper>"
        #expect(Self.read(wrapped) == .refused)
        let doctype = "<!DOCTYPE r [<!ENTITY e \"admin@victim.example\">]>" + "<r>&e;</r>"
        #expect(Self.read(doctype) == .refused)
        #expect(Self.read("<NameID>admin@victim.example</NameID>") == .refused)
        #expect(Self.read("not xml") == .refused)
    }
}
