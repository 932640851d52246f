import CLITestSupport
import CXMLSec
import Foundation
import TestIdP
import Testing

@_spi(Fuzzing) @testable import SAMLVerification

/// The signature SAML identity providers make is checked without xmlsec's chain
/// (``NativeSignature``): `SignedInfo` first, with the key prepared at load, then the reference
/// hashed while it is canonicalized. Every other shape still goes to xmlsec, and the verdicts
/// are the same either way.
@Suite struct NativeSignatureTests {
    /// `body` on this thread, with the native canonicalizations it caused (SignedInfo and the
    /// reference of a natively checked signature count one each).
    static func counting(_ body: () -> Void) throws -> Int {
        let context = try VerificationThreadContext.current()
        let before = context.nativeCanonicalizations
        body()
        return context.nativeCanonicalizations - before
    }

    @Test(arguments: [DigestAlgorithm.sha256, .sha512, .sha1])
    func genuineResponsesVerifyNatively(_ digest: DigestAlgorithm) throws {
        let verifier = Fixtures.verifier { $0.allowSHA1 = true }
        let xml = Fixtures.issue(.both) { $0.digestAlgorithm = digest }
        let passes = try Self.counting { #expect(Fixtures.code(xml, verifier) == nil) }
        #expect(passes == 4)
    }

    @Test func anECDSASignatureVerifiesNativelyAmongRSAKeys() throws {
        let xml = Fixtures.issue(.assertion, idp: Fixtures.ecIdP)
        let verifier = Fixtures.verifier([Fixtures.rsaPair, Fixtures.attackerPair, Fixtures.ecPair])
        let passes = try Self.counting { #expect(Fixtures.code(xml, verifier) == nil) }
        #expect(passes == 2)
    }

    /// The reference is hashed through a window of the thread's buffer: a document many times
    /// its size is hashed in pieces and still verifies; one changed byte past the first piece
    /// is a digest mismatch.
    @Test func aLargeResponseIsHashedInPieces() throws {
        let genuine = Fixtures.issue(.assertion) { $0.padToSize = 300_000 }
        let verifier = Fixtures.verifier()
        let passes = try Self.counting { #expect(Fixtures.code(genuine, verifier) == nil) }
        #expect(passes == 2)
        // A value longer than the thread's whole window goes to the digest without being copied.
        let long = Fixtures.issue(.assertion) { $0.attributes.append(SAMLAttribute("blob", String(repeating: "b", count: 40_000))) }
        #expect(Fixtures.code(long, verifier) == nil)
        #expect(Fixtures.code(long.replacingFirst("bbbbb<", with: "bbbbc<"), verifier) == .signatureInvalid)
        let last = genuine.range(of: "<saml:AttributeValue", options: .backwards)!
        let value = genuine[last.upperBound...].firstIndex(of: ">")!
        var tampered = genuine
        tampered.insert("x", at: genuine.index(after: value))
        #expect(Fixtures.code(tampered, verifier) == .signatureInvalid)
    }

    @Test func forgedAndTamperedResponsesKeepTheirVerdicts() throws {
        let verifier = Fixtures.verifier([Fixtures.rsaPair, Fixtures.rotatedPair])
        // Signed by another key: refused on SignedInfo, nothing canonicalized.
        let forged = Fixtures.issue(.assertion, idp: Fixtures.attackerIdP)
        let passes = try Self.counting { #expect(Fixtures.code(forged, verifier) == .keyNotTrusted) }
        #expect(passes == 0)
        // Signed by the trusted key, content changed afterwards.
        let tampered = Fixtures.issue(.assertion).replacingFirst("alice@example.com", with: "mallory@example.com")
        #expect(Fixtures.code(tampered, verifier) == .signatureInvalid)
        // A DigestValue changed is a SignedInfo changed: no trusted key signed that.
        let genuine = Fixtures.issue(.assertion)
        let start = genuine.range(of: "<ds:DigestValue>")!.upperBound
        let broken = genuine.replacingCharacters(in: start..<genuine.index(start, offsetBy: 2), with: "!!")
        #expect(Fixtures.code(broken, verifier) == .keyNotTrusted)
    }

    /// The values are decoded as xmlsec decodes them: blanks, tabs and line breaks inside (the
    /// strict decoder's refusal goes to xmlsec's), and nothing that is not base64.
    @Test func signatureAndDigestValuesWithWhitespaceStillVerify() throws {
        let genuine = Fixtures.issue(.assertion)
        let start = genuine.range(of: "<ds:SignatureValue>")!.upperBound
        let spaced = genuine.replacingCharacters(
            in: start..<genuine.index(start, offsetBy: 8),
            with: "\n\t" + genuine[start..<genuine.index(start, offsetBy: 4)] + " \r\n "
                + genuine[genuine.index(start, offsetBy: 4)..<genuine.index(start, offsetBy: 8)])
        #expect(spaced != genuine)
        let passes = try Self.counting { #expect(Fixtures.code(spaced) == nil) }
        #expect(passes == 2)
    }

    /// Shapes outside the native check go to xmlsec, which decides as before.
    @Test func otherShapesAreLeftToXmlsec() throws {
        let verifier = Fixtures.verifier()
        // Inclusive C14N: libxml2 canonicalizes inside xmlsec, nothing natively.
        let inclusive = Fixtures.issue(.assertion) { $0.canonicalization = .inclusive10 }
        let inclusivePasses = try Self.counting { #expect(Fixtures.code(inclusive, verifier) == nil) }
        #expect(inclusivePasses == 0)
        // A KeyInfo before the SignatureValue is not the shape: xmlsec refuses it.
        let genuine = Fixtures.issue(.assertion)
        let value = genuine.element("<ds:SignatureValue>", "</ds:SignatureValue>")
        let reordered = genuine.replacingFirst(value, with: "").replacingFirst("</ds:SignedInfo>", with: "</ds:SignedInfo><ds:KeyInfo/>" + value)
        #expect(Fixtures.code(reordered, verifier) != nil)
    }

    /// After `SignatureValue` xmlsec takes at most one `KeyInfo`, then `Object`s only: anything
    /// else is not the native shape, and xmlsec refuses it as before.
    @Test func signatureChildrenFollowXmlsecsGrammar() {
        let genuine = Fixtures.issue(.assertion)
        #expect(genuine.contains("<ds:KeyInfo>"))
        let object = "<ds:Object/>"
        let objectFirst = genuine.replacingFirst("<ds:KeyInfo>", with: object + "<ds:KeyInfo>")
        let twoKeyInfos = genuine.replacingFirst("<ds:KeyInfo>", with: "<ds:KeyInfo/><ds:KeyInfo>")
        let objectLast = genuine.replacingFirst("</ds:Signature>", with: object + object + "</ds:Signature>")
        #expect(Fixtures.code(objectFirst) == .signatureInvalid)
        #expect(Fixtures.code(twoKeyInfos) == .signatureInvalid)
        #expect(Fixtures.code(objectLast) == nil)
    }

    /// The prefix list is split on bytes, as samlgate's exc-c14n classes split it: a blank
    /// before a combining mark still separates two prefixes.
    @Test func thePrefixListIsSplitOnBytes() throws {
        let xml = #"<m xmlns:ec="http://www.w3.org/2001/10/xml-exc-c14n#"><ec:InclusiveNamespaces PrefixList="xs &#x301;q&#9;saml"/></m>"#
        let bytes = Array(xml.utf8)
        let doc = try #require(
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { xmlReadMemory($0.baseAddress, Int32($0.count), nil, "UTF-8", 0) }
            })
        defer { xmlFreeDoc(doc) }
        let method = try #require(xmlDocGetRootElement(doc))
        guard case .prefixes(let list) = InclusivePrefixList.read(method) else {
            Issue.record("the prefix list was not read")
            return
        }
        #expect(list == ["xs", "\u{301}q", "saml"])
    }

    /// The verifier's digest path against libxml2's bytes: the same SHA-256 on the
    /// canonicalization edge cases and on seeded random documents, every node-set shape.
    @Test(arguments: 0..<20) func theStreamedDigestIsLibxml2sDigest(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &+ 0xD16E57)
        // Seed 1: runs of text and attribute values longer than the differential's 61-byte window.
        let longRuns =
            #"<r xmlns:p="urn:p" a=""# + String(repeating: "v", count: 200) + #""><p:c>"# + String(repeating: "x", count: 300)
            + "</p:c><d>" + String(repeating: "y", count: 100) + "&amp;" + String(repeating: "z", count: 100) + "</d></r>"
        let document = seed == 0 ? CanonicalizationTests.edgeCases : seed == 1 ? longRuns : RandomXML.document(&random)
        var differential = CanonicalizationDifferential()
        var shapes: [CanonicalizationDifferential.Shape] = []
        for apex in 0..<8 {
            for excluded in [nil, 0, 1] as [Int?] {
                for withComments in [false, true] {
                    shapes.append(.init(apex: apex, excluded: excluded, withComments: withComments, prefixes: apex % 2 == 0 ? nil : ["xs"]))
                }
            }
        }
        let outcomes = Array(document.utf8).withUnsafeBytes { differential.compare($0, shapes: shapes) }
        #expect(outcomes.contains { if case .identical = $0 { true } else { false } })
        for outcome in outcomes {
            switch outcome {
            case .identical, .declined, .notParsed: continue
            default: Issue.record("\(outcome)")
            }
        }
    }
}
