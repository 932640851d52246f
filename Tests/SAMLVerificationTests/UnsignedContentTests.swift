import CLITestSupport
import SAMLVerification
import TestIdP
import Testing

/// What no signature covers never carries identity or markup a backend could act on: a naive
/// backend reads the first `NameID` in document order, and some XML stacks follow XInclude or
/// stylesheet instructions. Each case is a genuine, verifying response with one insertion.
@Suite struct UnsignedContentTests {
    static let victim = "<saml:NameID>victim@example.com</saml:NameID>"

    /// Insertions into the unsigned envelope of an Assertion-signed response, before the
    /// Assertion (after the Response's Issuer), and the code each is refused with.
    static let envelope: [(String, VerificationError.Code)] = [
        ("<saml:Subject>\(victim)</saml:Subject>", .unsignedContent),
        (victim, .unsignedContent),
        ("<samlp:Extensions>\(victim)</samlp:Extensions>", .unsignedContent),
        ("<samlp:Extensions><e:x xmlns:e=\"urn:e\">\(victim)</e:x></samlp:Extensions>", .unsignedContent),
        ("<e:User xmlns:e=\"urn:e\">victim@example.com</e:User>", .unsignedContent),
        // Matched by local name too, for backends that ignore namespaces.
        ("<samlp:Extensions><NameID>victim@example.com</NameID></samlp:Extensions>", .unsignedContent),
        ("<samlp:Extensions><e:Subject xmlns:e=\"urn:e\"><e:NameID>v</e:NameID></e:Subject></samlp:Extensions>", .unsignedContent),
        // Out of the schema's order, or twice.
        ("<samlp:Status><samlp:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:Success\"/></samlp:Status>", .unsignedContent),
        ("<samlp:Extensions/><samlp:Extensions/>", .unsignedContent),
        ("victim@example.com", .unsignedContent),
        ("<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"file:///etc/passwd\" parse=\"text\"/>", .forbiddenMarkup),
        ("<xi:include xmlns:xi=\"http://www.w3.org/2003/XInclude\" href=\"http://169.254.169.254/\"/>", .forbiddenMarkup),
        ("<?xml-stylesheet type=\"text/xsl\" href=\"http://attacker.example/x.xsl\"?>", .forbiddenMarkup),
    ]

    static func afterResponseIssuer(_ xml: String, _ insertion: String) -> String {
        xml.replacingFirst("</saml:Issuer>", with: "</saml:Issuer>" + insertion)
    }

    @Test(arguments: envelope.indices)
    func theUnsignedEnvelopeHoldsOnlyWhatTheSchemaAllows(_ index: Int) {
        let (insertion, code) = Self.envelope[index]
        let xml = Self.afterResponseIssuer(Fixtures.issue(.assertion), insertion)
        #expect(Fixtures.code(xml) == code, "\(insertion)")
        #expect(ForwardedDocumentTests.refusal(xml) == code)
        #expect(ForwardedDocumentTests.refusal(xml, fallback: .original) == code)
    }

    @Test func aNameIDInsideStatusDetailIsRefused() {
        let xml = Fixtures.issue(.assertion).replacingFirst(
            "</samlp:Status>", with: "<samlp:StatusDetail>\(Self.victim)</samlp:StatusDetail></samlp:Status>")
        #expect(Fixtures.code(xml) == .unsignedContent)
    }

    @Test func extensionsWithoutIdentityAreAccepted() throws {
        let xml = Self.afterResponseIssuer(
            Fixtures.issue(.assertion), "\n<samlp:Extensions><e:trace xmlns:e=\"urn:e\">42</e:trace></samlp:Extensions>\n")
        #expect(try #require(Fixtures.accept(xml)).nameID == "alice@example.com")
    }

    @Test(arguments: [SignTarget.assertion, .response, .both])
    func aNameIDInsideKeyInfoIsRefused(_ sign: SignTarget) {
        // KeyInfo sits inside the Signature, which the enveloped transform removes from what it
        // signs; the Assertion's Signature comes before its Subject.
        for insertion in [Self.victim, "<NameID>victim@example.com</NameID>", "<ds:KeyName><saml:Subject/></ds:KeyName>"] {
            let xml = Fixtures.issue(sign).replacingFirst("</ds:KeyInfo>", with: insertion + "</ds:KeyInfo>")
            #expect(Fixtures.code(xml) == .unsignedContent, "\(insertion)")
        }
    }

    @Test func anUndeclaredPrefixIsRefusedAnywhere() {
        // libxml2 keeps `<saml2:NameID>` with no declaration as an element in no namespace, named
        // `saml2:NameID`: what a namespace-unaware backend reads as the first NameID.
        let genuine = Fixtures.issue(.assertion)
        let variants = [
            genuine.replacingFirst(
                "</samlp:Status>", with: "<samlp:StatusDetail><saml2:NameID>victim@example.com</saml2:NameID></samlp:StatusDetail></samlp:Status>"),
            genuine.replacingFirst("</ds:KeyInfo>", with: "</ds:KeyInfo><ds:Object><x:NameID>victim@example.com</x:NameID></ds:Object>"),
            genuine.replacingFirst("<samlp:Status>", with: "<samlp:Status x:NameID=\"victim@example.com\">"),
        ]
        for xml in variants {
            #expect(Fixtures.code(xml) == .malformedXML)
        }
    }

    @Test func anIssuerAfterTheAssertionIsRefused() {
        let xml = Fixtures.issue(.assertion).replacingFirst(
            "</samlp:Response>", with: "<saml:Issuer>https://idp.attacker.example</saml:Issuer></samlp:Response>")
        #expect(Fixtures.code(xml) == .unsignedContent)
    }

    @Test(arguments: [SignTarget.assertion, .response, .both])
    func processingInstructionsAndXIncludeAreRefusedAnywhere(_ sign: SignTarget) {
        let genuine = Fixtures.issue(sign)
        let stylesheet = "<?xml-stylesheet href=\"x.xsl\"?>"
        let include = "<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"x\"/>"
        let variants = [
            genuine.replacingFirst("<samlp:Response", with: stylesheet + "<samlp:Response"),
            genuine + stylesheet,
            genuine.replacingFirst("</saml:NameID>", with: "</saml:NameID>" + stylesheet),
            genuine.replacingFirst("</saml:NameID>", with: "</saml:NameID>" + include),
            genuine.replacingFirst("</ds:KeyInfo>", with: include + "</ds:KeyInfo>"),
            genuine.replacingFirst("</ds:KeyInfo>", with: stylesheet + "</ds:KeyInfo>"),
        ]
        for xml in variants {
            #expect(Fixtures.code(xml) == .forbiddenMarkup)
        }
    }
}
