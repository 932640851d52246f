import CLITestSupport
import CXMLSec
import Foundation
import TestIdP
import Testing

@_spi(Fuzzing) @testable import SAMLVerification

/// The native exclusive canonicalizer against libxml2's, byte for byte, on the node sets
/// xmlsec builds (`xmlSecNodeSetGetChildren`, intersected with an inverted one for the
/// enveloped signature): every element of every document as the apex, with each of its
/// element children excluded in turn, with and without comments, with and without
/// `InclusiveNamespaces` prefix lists. When the canonicalizer declines, libxml2 is used; it
/// must decline whenever libxml2 fails, and never produce different bytes.
@Suite struct CanonicalizationTests {
    /// Outcome counts of one comparison run.
    struct Tally {
        var identical = 0
        var declined = 0
    }

    static let prefixLists: [[String]?] = [nil, ["xs"], ["xs", "saml", "xsi"], ["r", "q", "unbound"]]

    static func compare(_ xml: String, _ tally: inout Tally, sourceLocation: SourceLocation = #_sourceLocation) {
        _ = cxmlsec_init()
        let bytes = Array(xml.utf8)
        let options = Int32(bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        guard
            let doc = bytes.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) { xmlReadMemory($0.baseAddress, Int32($0.count), nil, "UTF-8", options) }
            })
        else {
            Issue.record("test document does not parse", sourceLocation: sourceLocation)
            return
        }
        defer { xmlFreeDoc(doc) }
        var canonicalizer = ExclusiveCanonicalizer()
        let native = CanonicalBuffer(capacity: 64)
        for apex in CanonicalizationDifferential.elements(doc) {
            let exclusions: [XMLTree.Node?] = [nil] + Array(XMLTree.childElements(apex))
            for excluded in exclusions {
                for withComments in [false, true] {
                    for list in prefixLists {
                        LibXML2Canonicalization.withPrefixList(list) { prefixes in
                            native.reset()
                            let handled = canonicalizer.canonicalize(
                                apex: apex, excluding: excluded, withComments: withComments,
                                inclusivePrefixes: prefixes, into: native)
                            let reference = libxml2(doc, apex: apex, excluded: excluded, withComments: withComments, prefixes: prefixes)
                            guard handled else {
                                tally.declined += 1
                                return
                            }
                            guard let reference else {
                                Issue.record("libxml2 failed where the native canonicalizer did not", sourceLocation: sourceLocation)
                                return
                            }
                            let ours = String(decoding: native.bytes, as: UTF8.self)
                            if Array(native.bytes) == reference {
                                tally.identical += 1
                            } else {
                                Issue.record(
                                    """
                                    differs (apex \(name(apex)), excluded \(excluded.map(name) ?? "-"), comments \(withComments), \
                                    prefixes \(list ?? [])):
                                    native: \(ours)
                                    libxml2: \(String(decoding: reference, as: UTF8.self))
                                    """, sourceLocation: sourceLocation)
                            }
                        }
                    }
                }
            }
        }
    }

    /// libxml2 through xmlsec's node sets, exactly as xmlsec's own C14N transform runs it (the
    /// fuzzing differential's, so the test and the fuzzer compare against the same reference).
    static func libxml2(
        _ doc: UnsafeMutablePointer<xmlDoc>, apex: XMLTree.Node, excluded: XMLTree.Node?, withComments: Bool,
        prefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [UInt8]? {
        switch LibXML2Canonicalization.canonicalize(doc, apex: apex, excluded: excluded, withComments: withComments, prefixes: prefixes) {
        case .shapeNotRecognised:
            // The shapes xmlsec builds here are the ones the native path must recognise.
            Issue.record("the node set xmlsec builds is not recognised as a signed subtree", sourceLocation: sourceLocation)
            return nil
        case .failed: return nil
        case .canonical(let bytes): return bytes
        }
    }

    static func name(_ node: XMLTree.Node) -> String {
        String(cString: node.pointee.name)
    }

    // MARK: - Corpora

    /// Namespaces declared high and used low, rebound prefixes, default namespaces and their
    /// undeclaration, attribute order across namespaces, every escaped character in text and
    /// attributes, CDATA, comments, processing instructions, `xml:` attributes, non-ASCII.
    static let edgeCases = #"""
        <r:root xmlns:r="urn:r" xmlns="http://default.example/ns" xmlns:u="urn:unused" xmlns:xs="http://www.w3.org/2001/XMLSchema" a="1" r:b="&amp;&lt;&gt;&quot;'&#9;&#10;&#13;x" xml:lang="en">
          <child z="2" a="1" r:z="3" xmlns:q="urn:q" q:y="4"> text &amp; &lt; &gt; &#13; "quotes" 'apos' ]]&gt;
            <![CDATA[cdata <b> & ]]]>
            <!-- a comment with &amp; and <b> -->
            <?pi target data?><?pi2?>
            <plain xmlns="">unqualified under a default<inner>still none</inner><back xmlns="http://default.example/ns"/></plain>
            <r:again xmlns:r="urn:r2"><r:x r:attr="v"/></r:again>
            <deep><deeper xmlns="http://default.example/ns">same default again</deeper></deep>
            <xs:typed xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">v</xs:typed>
            <empty/><u:used/>
            <order b:x="1" a:x="2" c="3" xmlns:a="urn:zzz" xmlns:b="urn:aaa" a:a="4" xml:space="preserve"/>
            <ünïcode ättr="värde &#x1F600;">ü€😀</ünïcode>
          </child>
          <ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>x<!--c--></ds:SignedInfo></ds:Signature>
        </r:root>
        """#

    /// Documents the native canonicalizer must leave to libxml2.
    static let declined = [
        #"<a xmlns:rel="relative/path"><rel:b/></a>"#,
        #"<a xmlns:m="mailto:someone@example.com"><m:b/></a>"#,
        #"<a xmlns="urn:x"><b xmlns:p="http://h/&quot;q"><p:c/></b></a>"#,
        // Fuzz finding `canonicalization` #1: after `urn:`, `//` starts an authority for
        // libxml2's URI parser, whose empty port (`http:` then `/`) fails the whole C14N.
        #"<a xmlns:r="urn://http://default.example/ns"><r:b/></a>"#,
        #"<a xmlns:r="urn:/x"><r:b/></a>"#,
    ]

    @Test func edgeCasesMatchLibxml2() {
        var tally = Tally()
        Self.compare(Self.edgeCases, &tally)
        #expect(tally.identical > 200)
        #expect(tally.declined == 0)
    }

    @Test func signedResponsesMatchLibxml2() throws {
        var tally = Tally()
        let responses = [
            Fixtures.issue(.assertion), Fixtures.issue(.response), Fixtures.issue(.both),
            Fixtures.issue(.both) { $0.pretty = true }, Fixtures.issue(.assertion) { $0.signedInfoLineBreaks = true },
            Fixtures.issue(.assertion, idp: Fixtures.ecIdP),
            Fixtures.issue(.response) { $0.attributes = [SAMLAttribute("note", "a & b < c > d \"e\"\t\r\n")] },
        ]
        for xml in responses {
            Self.compare(xml, &tally)
        }
        #expect(tally.declined == 0)
        #expect(tally.identical > 1000)
    }

    @Test func unusualNamespacesAreLeftToLibxml2() {
        for xml in Self.declined {
            var tally = Tally()
            Self.compare(xml, &tally)
            #expect(tally.identical == 0 && tally.declined > 0, "\(xml)")
        }
        // `#default` in a prefix list is left to libxml2 too.
        var tally = Tally()
        LibXML2Canonicalization.withPrefixList(["#default"]) { prefixes in
            Self.elementsOf(#"<a xmlns="urn:x"><b/></a>"#) { apex in
                var canonicalizer = ExclusiveCanonicalizer()
                let out = CanonicalBuffer()
                if !canonicalizer.canonicalize(apex: apex, excluding: nil, withComments: false, inclusivePrefixes: prefixes, into: out) {
                    tally.declined += 1
                }
            }
        }
        #expect(tally.declined == 2)
    }

    /// Seeded random documents: random trees over a few prefixes bound to a few URIs (rebound
    /// at random depths), namespaced and plain attributes, text with every escaped character,
    /// comments, PIs and CDATA.
    @Test(arguments: 0..<40) func randomDocumentsMatchLibxml2(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &+ 0x5EED)
        var tally = Tally()
        Self.compare(RandomXML.document(&random), &tally)
        #expect(tally.identical > 0)
    }

    static func elementsOf(_ xml: String, _ body: (XMLTree.Node) -> Void) {
        let bytes = Array(xml.utf8)
        guard
            let doc = bytes.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) { xmlReadMemory($0.baseAddress, Int32($0.count), nil, "UTF-8", 0) }
            })
        else { return }
        defer { xmlFreeDoc(doc) }
        CanonicalizationDifferential.elements(doc).forEach(body)
    }

    // MARK: - Through the verifier

    @Test func verificationCanonicalizesNatively() throws {
        let verifier = Fixtures.verifier()
        _ = Fixtures.accept(Fixtures.issue(.assertion), verifier)
        let context = try VerificationThreadContext.current()
        let (native, retries) = (context.nativeCanonicalizations, context.canonicalizationRetries)
        for sign in [SignTarget.assertion, .response, .both] {
            _ = Fixtures.accept(Fixtures.issue(sign) { $0.pretty = true }, verifier)
        }
        // SignedInfo + reference per signature, twice for "both".
        #expect(context.nativeCanonicalizations - native == 8)
        #expect(context.canonicalizationRetries == retries)
        // Verified for forwarding, a pretty document's normalized form fails by design (first
        // attempt, without the libxml2 retry), the original verifies natively: no retry at all.
        let response = try Fixtures.forwarded(Fixtures.issue(.both) { $0.pretty = true }).get()
        #expect(response.normalization == .equivalent)
        #expect(context.canonicalizationRetries == retries)
    }

    /// The transform classes read `ec:InclusiveNamespaces` themselves (xmlsec's reader is
    /// replaced): a missing `PrefixList`, another element, or a second element is refused.
    @Test(arguments: [
        ("missing PrefixList", #" PrefixList="xs""#, ""),
        ("another element", "<ec:InclusiveNamespaces ", "<ec:OtherNamespaces "),
        (
            "a second element", #"PrefixList="xs"/>"#,
            #"PrefixList="xs"/><ec:InclusiveNamespaces xmlns:ec="http://www.w3.org/2001/10/xml-exc-c14n#" PrefixList="xs"/>"#
        ),
    ])
    func malformedInclusiveNamespacesAreRefused(_ variant: (String, String, String)) {
        let genuine = Fixtures.issue(.assertion)
        #expect(genuine.contains(#"<ec:InclusiveNamespaces xmlns:ec="http://www.w3.org/2001/10/xml-exc-c14n#" PrefixList="xs"/>"#))
        let broken = genuine.replacingFirst(variant.1, with: variant.2)
        #expect(broken != genuine)
        do {
            _ = try Fixtures.verifier().verify(Array(broken.utf8), mvpd: Fixtures.mvpd)
            Issue.record("accepted: \(variant.0)")
        } catch {
            // Refused while reading the transform, not later as a changed SignedInfo.
            #expect(error.code == .signatureInvalid && error.message.contains("readNode"), "\(variant.0): \(error)")
        }
    }

    @Test func libxml2OnlyGivesTheSameVerdicts() throws {
        let native = Fixtures.verifier()
        let libxml2 = Fixtures.verifier { $0.nativeCanonicalization = false }
        let genuine = Fixtures.issue(.both)
        let tampered = genuine.replacingFirst("alice@example.com", with: "mallory@example.com")
        #expect(Fixtures.code(genuine, native) == nil)
        #expect(Fixtures.code(genuine, libxml2) == nil)
        let context = try VerificationThreadContext.current()
        let retries = context.canonicalizationRetries
        // The native verdict is final: no second pass with libxml2 canonicalizing.
        #expect(Fixtures.code(tampered, native) == .signatureInvalid)
        #expect(context.canonicalizationRetries == retries)
        #expect(Fixtures.code(tampered, libxml2) == .signatureInvalid)
        #expect(context.canonicalizationRetries == retries)
    }
}
