import SAMLEncoding
@testable import SAMLVerification
import TestIdP
import Testing

/// `survivesNormalization` takes shortcuts; each case is checked against the oracle
/// "normalize the bytes, then verify them from scratch".
@Suite struct NormalizationProbeTests {
    /// The quick classification (declaration, blanks around the root, word-at-a-time scan)
    /// answers only when it agrees with the byte-by-byte state machine.
    @Test func quickClassificationAgreesWithTheStateMachine() {
        let base = Fixtures.issue(.assertion)
        let root = String(base[base.range(of: "<samlp:Response")!.lowerBound...])
        let variants = [
            base, base + "\n", "\n" + root + "\r\n", root,
            base.replacingFirst("?>", with: "?>\r\n\t "),
            base.replacingFirst("?>", with: "?>\n<!-- c -->\n"),
            base.replacingFirst("<?xml version", with: "<?xml  version"),
            base.replacingFirst("<saml:Issuer>", with: "<saml:Issuer>\n"),
            Fixtures.issue(.both) { $0.pretty = true },
            Fixtures.issue(.assertion) { $0.attributes = [SAMLAttribute("n", "a  b")] },
            Fixtures.issue(.assertion) { $0.attributes = [SAMLAttribute("n", "ü")] },
        ]
        var answered = 0
        for xml in variants {
            Array(xml.utf8).withUnsafeBytes { bytes in
                if let quick = NormalizationProbe.quickClassify(bytes) {
                    answered += 1
                    #expect(quick == NormalizationProbe.exactClassify(bytes), "\(xml.prefix(60))")
                }
            }
        }
        #expect(answered >= 5)
    }

    static func oracle(_ xml: String, signed: SignedElementKind) -> Bool {
        let input = Array(xml.utf8)
        var output = [UInt8](repeating: 0, count: input.count)
        let n = input.withUnsafeBytes { i in output.withUnsafeMutableBytes { WhitespaceNormalizer.normalize(i, into: $0) } }
        let verifier = Fixtures.verifier { $0.checkNormalization = false }
        return (try? verifier.verify(Array(output[..<n]), mvpd: Fixtures.mvpd))?.signed == signed
    }

    static let cases: [(String, @Sendable () -> String, Bool)] = [
        ("compact", { Fixtures.issue(.assertion) }, true),
        ("compact both", { Fixtures.issue(.both) }, true),
        ("signature value line breaks", {
            let xml = Fixtures.issue(.assertion)
            return xml.replacingFirst("<ds:SignatureValue>", with: "<ds:SignatureValue>\n")
        }, true),
        ("whitespace between unsigned response children", {
            Fixtures.issue(.assertion).replacingFirst("<samlp:Status>", with: "\n\t  <samlp:Status>")
        }, true),
        ("line break between attributes of the unsigned root", {
            let xml = Fixtures.issue(.assertion)
            return xml.replacingFirst(" Version=\"2.0\"", with: "\n Version=\"2.0\"")
        }, true),
        ("line break replacing the space between attributes", {
            let xml = Fixtures.issue(.assertion)
            return xml.replacingFirst(" Version=\"2.0\"", with: "\nVersion=\"2.0\"")
        }, false),
        ("pretty", { Fixtures.issue(.both) { $0.pretty = true } }, false),
        ("pretty, assertion only", { Fixtures.issue(.assertion) { $0.pretty = true } }, false),
        ("line breaks in SignedInfo", { Fixtures.issue(.assertion) { $0.signedInfoLineBreaks = true } }, false),
        ("line breaks in SignedInfo, response", { Fixtures.issue(.response) { $0.signedInfoLineBreaks = true } }, false),
        ("double space in a signed value", { Fixtures.issue(.assertion) { $0.attributes = [SAMLAttribute("name", "Alice  Smith")] } }, false),
        ("comment with line break outside the signed element", {
            Fixtures.issue(.assertion).replacingFirst("<samlp:Status>", with: "<!-- a\nb --><samlp:Status>")
        }, true),
    ]

    @Test(arguments: 0..<cases.count)
    func matchesOracle(_ index: Int) throws {
        let (name, make, expected) = Self.cases[index]
        let xml = make()
        let verified = try #require(Fixtures.accept(xml), "\(name)")
        #expect(verified.survivesNormalization == expected, "\(name)")
        #expect(Self.oracle(xml, signed: verified.signed) == expected, "\(name) (oracle)")
    }
}

extension NormalizationProbeTests {
    @Test func whitespaceAroundTheRootOnly() throws {
        let xml = Fixtures.issue(.assertion) + "\n\t \n<!-- trailing -->\n"
        let verified = try #require(Fixtures.accept(xml))
        #expect(verified.survivesNormalization == true)
        #expect(Self.oracle(xml, signed: .assertion))
    }
}
