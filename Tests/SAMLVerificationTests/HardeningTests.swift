import Foundation
import SAMLVerification
import TestIdP
import Testing

/// Attacks found in review: values from an unsigned Response, XPath through IDs and namespaced
/// attributes, a replay cache that forgets, and encodings the byte-level checks do not see.
@Suite struct HardeningTests {
    @Test func anIDThatIsNotANameIsRejectedBeforeXmlsecSeesIt() {
        let xml = Fixtures.issue(.response)
        let id = xml.responseID
        let evil = "xpointer(//*[count(//*[count(//*)>0])>0])"
        let attack = xml.replacingOccurrences(of: id, with: evil)
            .replacingFirst("</samlp:Response>", with: String(repeating: "<e/>", count: 2_000) + "</samlp:Response>")
        let started = Date()
        // Refused by the markup budget (2,000 elements in so few bytes) or as malformed: never run.
        #expect([.malformedXML, .tooManyNodes].contains(Fixtures.code(attack)))
        #expect(Fixtures.code(xml.replacingOccurrences(of: id, with: evil)) == .malformedXML)
        #expect(Date().timeIntervalSince(started) < 5, "the XPath must never run")
    }

    @Test func aNamespacedURIOrAlgorithmIsRefused() {
        let xml = Fixtures.issue(.assertion)
        let id = xml.assertionID
        let uri = xml.replacingFirst("<ds:Reference URI=\"#\(id)\"", with: "<ds:Reference xmlns:x=\"urn:x\" x:URI=\"#xpointer(/)\" URI=\"#\(id)\"")
        #expect(Fixtures.code(uri) == .referenceMismatch)
        let algorithm = xml.replacingFirst(
            "<ds:DigestMethod ", with: "<ds:DigestMethod xmlns:x=\"urn:x\" x:Algorithm=\"http://www.w3.org/2000/09/xmldsig#sha1\" ")
        #expect(Fixtures.code(algorithm) == .algorithmNotAllowed)
    }

    @Test func anUnsignedResponseDestinationDoesNotCount() {
        let expected = "https://saml.sp.auth.adobe.com/sp/ACS.saml2"
        let verifier = Fixtures.verifier { $0.expectedDestination = expected }
        let xml = Fixtures.issue(.assertion) { $0.destination = nil }
        let forged = xml.replacingFirst("<samlp:Response ", with: "<samlp:Response Destination=\"\(expected)\" ")
        #expect(Fixtures.code(forged, verifier) == .destinationMismatch)
        // Signed, the same Destination is good evidence.
        let signed = Fixtures.issue(.response) { $0.destination = expected }
        #expect(Fixtures.code(signed, verifier) == nil)
    }

    @Test func anUnsignedResponseInResponseToDoesNotBindTheRequest() {
        let xml = Fixtures.issue(.assertion)
        let forged = xml.replacingFirst("<samlp:Response ", with: "<samlp:Response InResponseTo=\"_req1\" ")
        #expect(Fixtures.code(forged, inResponseTo: "_req1") == .inResponseToMismatch)
        #expect(Fixtures.code(Fixtures.issue(.response) { $0.inResponseTo = "_req1" }, inResponseTo: "_req1") == nil)
    }

    @Test func anAssertionThatNeverExpiresIsRefused() {
        #expect(Fixtures.code(Fixtures.issue(.assertion) { $0.omitExpiry = true }) == .unboundedValidity)
        #expect(Fixtures.code(Fixtures.issue(.both) { $0.omitExpiry = true }) == .unboundedValidity)
    }

    @Test func aFullReplayCacheRefusesInsteadOfForgetting() {
        let verifier = Fixtures.verifier(replay: InMemoryReplayCache(capacity: 1))
        let first = Fixtures.issue(.assertion)
        #expect(Fixtures.code(first, verifier) == nil)
        #expect(Fixtures.code(Fixtures.issue(.assertion), verifier) == .replayCacheFull)
        #expect(Fixtures.code(first, verifier) == .replayed)
    }

    @Test func documentsAreAlwaysReadAsUTF8() {
        // Declared UTF-7: the DOCTYPE hides behind "+ADw-" and must not come to life.
        let utf7 =
            "<?xml version=\"1.0\" encoding=\"UTF-7\"?>+ADwAIQ-DOCTYPE r +AFs +ADwAIQ-ENTITY e SYSTEM +ACI-file:///etc/passwd+ACI +AD4 +AF0 +AD4-<r>&e;</r>"
        let code = Fixtures.code(utf7)
        #expect(code == .malformedXML || code == .forbiddenDTD)
        // BOM-less UTF-16LE with a DOCTYPE.
        let utf16 = Array("<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE r [<!ENTITY e \"x\">]><r>&e;</r>".utf16)
            .flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
        let verifier = Fixtures.verifier()
        #expect(throws: VerificationError.self) { try verifier.verify(utf16, mvpd: Fixtures.mvpd) }
        // Declared ISO-8859-1, even ASCII-only: refused, since the document is forwarded with its
        // declaration and a backend honouring it could read other markup.
        let latin = Fixtures.issue(.assertion)
        #expect(Fixtures.code(latin.replacingFirst("encoding=\"UTF-8\"", with: "encoding=\"ISO-8859-1\"")) == .malformedXML)
    }
}

/// Markup the limits scanner cannot count the way libxml2 parses it is refused, not passed on.
@Suite struct MarkupScannerTests {
    static func code(_ document: String) -> VerificationError.Code? {
        // Inside Extensions: the one place of the unsigned envelope that may hold any element.
        Fixtures.code(
            Fixtures.issue(.assertion).replacingFirst("<samlp:Status>", with: "<samlp:Extensions>" + document + "</samlp:Extensions><samlp:Status>"))
    }

    @Test func attributesAreCountedWhereLibxml2SeesThem() {
        let many = (0..<65).map { "a\($0)=\"\"" }.joined(separator: " ")
        #expect(Self.code("<x \(many)/>") == .tooManyAttributes)
        #expect(Self.code("<x b='<c \(many)'/>") == .malformedXML)
        #expect(Self.code("<x b='>' \(many)/>") == .tooManyAttributes)
        // Inside a comment, CDATA or a processing instruction, nothing is a tag.
        #expect(Self.code("<!-- <x \(many)/> -->") == nil)
        #expect(Self.code("<y><![CDATA[<x \(many)/>]]></y>") == nil)
        // (The scanner lets the processing instruction through; the structure refuses it.)
        #expect(Self.code("<?p <x \(many)/> ?>") == .forbiddenMarkup)
    }

    @Test func constructsLeftOpenOrOddAreRefused() {
        for document in ["<x a=\"1\" <y/>", "<y></y a=\"1\">", "<y></y '>'>"] {
            #expect(Self.code(document) == .malformedXML, "\(document)")
        }
        var open = Array(Fixtures.issue(.assertion).utf8)
        open += Array("<!-- never closed".utf8)
        #expect(Fixtures.code(String(decoding: open, as: UTF8.self)) == .malformedXML)
    }

    @Test func namespaceDeclarationsInScope() {
        let declarations = (0..<12).map { "xmlns:p\($0)=\"urn:p\"" }.joined(separator: " ")
        #expect(Self.code("<a \(declarations)><b \(declarations)><c/></b></a>") == nil)
        #expect(Self.code("<a \(declarations)><b \(declarations)><c \(declarations)/></b></a>") == .tooManyNamespaces)
        // Closed elements leave the scope.
        #expect(Self.code("<a \(declarations)/><b \(declarations)/><c \(declarations)/><d \(declarations)/>") == nil)
    }

    @Test func markupDensityAndDepthAreBounded() {
        #expect(Self.code(String(repeating: "<e/>", count: 20_000)) == .tooManyNodes)
        #expect(Self.code(String(repeating: "<!--c-->", count: 20_000)) == .tooManyNodes)
        #expect(Self.code("<e " + (0..<60).map { "a\($0)=\"\"" }.joined(separator: " ") + "/>") == nil)
        #expect(Self.code(String(repeating: "<d>", count: 40) + String(repeating: "</d>", count: 40)) == .tooDeep)
        #expect(Self.code(String(repeating: "<d>", count: 20) + String(repeating: "</d>", count: 20)) == nil)
    }

    @Test func onlyUTF8IsDeclared() {
        let genuine = Fixtures.issue(.assertion)
        for encoding in ["UTF-7", "iso-8859-1", "UTF-16"] {
            #expect(Fixtures.code(genuine.replacingFirst("encoding=\"UTF-8\"", with: "encoding=\"\(encoding)\"")) == .malformedXML)
        }
        #expect(Fixtures.code(genuine.replacingFirst("encoding=\"UTF-8\"", with: "encoding='utf-8'")) == nil)
    }

    @Test func anInclusiveNamespacesPrefixListIsBounded() {
        // Every listed prefix is looked up at every canonicalized element, before any digest is
        // compared: a long list made a forged 94 KB response cost seconds of CPU.
        let genuine = Fixtures.issue(.assertion)
        func listing(_ list: String) -> String { genuine.replacingFirst("PrefixList=\"xs\"", with: "PrefixList=\"\(list)\"") }
        let sixteen = (0..<16).map { "p\($0)" }
        // Within the bound: read, then the altered SignedInfo fails as any alteration does.
        #expect(![VerificationError.Code.tooManyNamespaces, nil].contains(Fixtures.code(listing(sixteen.joined(separator: " ")))))
        #expect(Fixtures.code(listing("xs " + String(repeating: "a", count: 64))) != .tooManyNamespaces)
        let seventeen: [String] = sixteen + ["p16"]
        let bombs: [String] = [
            seventeen.joined(separator: " "), seventeen.joined(separator: "\t"), seventeen.joined(separator: "\n"),
            " " + seventeen.joined(separator: "  ") + " ", (0..<20_000).map { "p\($0)" }.joined(separator: " "),
            String(repeating: "a", count: 65), Array(repeating: "xs", count: 17).joined(separator: " "),
        ]
        for list in bombs {
            #expect(Fixtures.code(listing(list)) == .tooManyNamespaces)
        }
        // The CanonicalizationMethod of SignedInfo reads a list too.
        let method = "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\">"
        let bomb = "<ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\"\(seventeen.joined(separator: " "))\"/>"
        let onMethod = genuine.replacingFirst(
            "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>", with: method + bomb + "</ds:CanonicalizationMethod>"
        )
        #expect(onMethod != genuine)
        #expect(Fixtures.code(onMethod) == .tooManyNamespaces)
    }

    @Test func aReferenceAppliesAtMostTwoTransformsEachOnce() {
        let genuine = Fixtures.issue(.assertion)
        let again = "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"/>"
        #expect(Fixtures.code(genuine.replacingFirst("</ds:Transforms>", with: again + "</ds:Transforms>")) == .algorithmNotAllowed)
        #expect(
            Fixtures.code(genuine.replacingFirst("</ds:Transforms>", with: String(repeating: again, count: 50) + "</ds:Transforms>"))
                == .algorithmNotAllowed)
    }
}
