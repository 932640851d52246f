import CLITestSupport
import CookbookReference
import Foundation
import NIOCore
import SAMLEncoding
import Testing

/// The fast path against the cookbook's own Foundation code, row by row of the semantics table.
@Suite struct CookbookEncoderTests {
    static let tableRows: [(String, String)] = [
        ("space and tab runs become one space", "a \t  \t b"),
        ("VT, FF, NBSP and other spaces are not collapsed", "a\u{0B}\u{0B}b\u{0C} c\u{A0}\u{A0}d\u{2003} \u{2003}e"),
        ("spaces around a newline stay two spaces", "a \n b"),
        ("CR LF and lone CR are deleted", "a\r\nb\rc\nd"),
        ("Unicode newlines are deleted inside", "a\u{85}b\u{2028}c\u{2029}d\u{0B}e\u{0C}f"),
        ("leading and trailing whitespace of every kind", "\u{2000}\u{3000}\u{A0} \t\n<a/>\u{205F}\u{202F}\u{1680}\u{200B}\u{85}"),
        ("BOM is content, whitespace before it is trimmed", " \n\u{FEFF}<a/>"),
        ("trailing BOM is kept", "<a/>\u{FEFF} "),
        ("combining mark after leading space", " \u{301}abc"),
        ("not in the trim set", "\u{180E}\u{200C}\u{200D}\u{2060}\u{AD}x\u{AD}\u{2060}\u{200D}\u{200C}\u{180E}"),
        ("NUL and controls are kept", "\u{00}a\u{01}\u{1F}\u{7F}b\u{00}"),
        ("empty", ""),
        ("only whitespace", " \t\r\n\u{A0}\u{3000}\u{2028}"),
        ("one byte needs two pads", "<"),
        ("two bytes need one pad", "<a"),
        ("non-ASCII content", "<n>Grüße, 世界 😀</n>"),
        ("reserved characters in content", "<a b=\"!*'();:@&=+$,/?%#[]\"/>"),
        ("interior trimmable whitespace survives", "a\u{3000}b\u{A0}c\u{200B}d"),
        ("CR LF with indentation", "<r>\r\n    <a>1</a>\r\n\t<b>2</b>\r\n</r>\r\n"),
    ]

    @Test("semantics table rows match the cookbook", arguments: tableRows)
    func tableRow(_ row: (String, String)) throws {
        let (_, input) = row
        #expect(try Fast.encode(input) == CookbookReference.encode(input))
        #expect(try Fast.encode(input, stage: .normalized) == CookbookReference.normalize(input))
    }

    @Test func knownValues() throws {
        #expect(try Fast.encode("a \n b", stage: .normalized) == "a  b")
        #expect(try Fast.encode(" \u{301}abc", stage: .normalized) == "\u{301}abc")
        #expect(try Fast.encode("\u{FEFF}<a/>") == "77u%2FPGEvPg%3D%3D")
        #expect(try Fast.encode("") == "")
        #expect(try Fast.encode(" \t\n") == "")
        #expect(try Fast.encode("<a/>", stage: .base64) == "PGEvPg==")
    }

    @Test func everyTrimmableScalarAloneAtEitherEnd() throws {
        for scalar in TrickyInput.whitespace + TrickyInput.nearMisses {
            for input in ["\(scalar)x", "x\(scalar)", "x\(scalar)y", "\(scalar)\(scalar)"] {
                #expect(try Fast.encode(input) == CookbookReference.encode(input), "U+\(String(scalar.value, radix: 16))")
            }
        }
    }

    @Test func randomInputsMatchTheCookbook() throws {
        var rng = SeededGenerator(seed: 0x5A4D_4C47)
        for round in 0..<4000 {
            let input = TrickyInput.make(using: &rng)
            let expected = CookbookReference.encode(input)
            let actual = try Fast.encode(input)
            #expect(actual == expected, "round \(round)")
            if actual != expected { break }
        }
    }

    @Test func randomLongInputsMatchTheCookbook() throws {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<40 {
            let input = TrickyInput.make(using: &rng, maxPieces: 3000)
            #expect(try Fast.encode(input) == CookbookReference.encode(input))
        }
    }

    @Test func oneMegabyteDocument() throws {
        var line = "  <saml:Attribute Name=\"upstreamUserID\">\r\n\t\t<saml:AttributeValue>alice+ü€😀</saml:AttributeValue>\n"
        line += "\u{2028}</saml:Attribute>   \n"
        let input = "\u{FEFF}<samlp:Response>\n" + String(repeating: line, count: 1_048_576 / line.utf8.count) + "</samlp:Response>\n"
        #expect(input.utf8.count > 1_000_000)
        #expect(try Fast.encode(input) == CookbookReference.encode(input))
    }

    @Test func invalidUTF8IsRejectedWithItsOffset() {
        let cases: [([UInt8], Int)] = [
            ([0x3C, 0x61, 0xFF], 2),  // never valid
            ([0x61, 0xC0, 0x80], 1),  // overlong NUL
            ([0x61, 0x62, 0xE0, 0x80, 0x80], 2),  // overlong 3-byte
            ([0xED, 0xA0, 0x80], 0),  // surrogate
            ([0xF4, 0x90, 0x80, 0x80], 0),  // above U+10FFFF
            ([0x61, 0xE2, 0x80], 1),  // truncated
            (Array("0123456789abcdef".utf8) + [0x80], 16),  // lone continuation after the fast path
        ]
        for (bytes, offset) in cases {
            #expect {
                _ = try Fast.encode(bytes)
            } throws: { error in
                guard let error = error as? SAMLEncodingError else { return false }
                return error.code == .invalidUTF8 && error.offset == offset && error.message.contains("offset \(offset)")
            }
        }
    }

    /// The fused path validates while it normalizes; it must name the same first bad byte as a
    /// plain validation pass, wherever the bad byte sits (inside whitespace runs, at the ends).
    @Test func fusedValidationReportsTheFirstBadByte() {
        var rng = SeededGenerator(seed: 1234)
        let bad: [[UInt8]] = [[0xFF], [0x80], [0xC2], [0xE2, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80], [0xC0, 0xA0]]
        for _ in 0..<3000 {
            var bytes = Array(TrickyInput.make(using: &rng, maxPieces: 30).utf8)
            let at = Int.random(in: 0...bytes.count, using: &rng)
            bytes.insert(contentsOf: bad.randomElement(using: &rng)!, at: at)
            let expected = bytes.withUnsafeBytes { UTF8Validator.firstInvalidOffset(in: $0) }
            var reported: Int?
            do { _ = try Fast.encode(bytes) } catch { reported = (error as? SAMLEncodingError)?.offset }
            #expect(reported == expected && expected != nil, "\(bytes)")
            if reported != expected { break }
        }
    }

    @Test func stagesCompose() throws {
        let input = "<r>\n  <a>é</a>\t\t</r>\n"
        let normalized = try Fast.encode(input, stage: .normalized)
        let base64 = try Fast.encode(input, stage: .base64)
        #expect(base64 == Data(normalized.utf8).base64EncodedString())
        #expect(try Fast.encode(input, stage: .encoded) == CookbookReference.encode(input))
    }

    @Test func normalizerWorksInPlace() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let input = TrickyInput.make(using: &rng, maxPieces: 200)
            var bytes = Array(input.utf8)
            let n = bytes.withUnsafeMutableBytes { raw in
                WhitespaceNormalizer.normalize(UnsafeRawBufferPointer(raw), into: raw)
            }
            #expect(String(decoding: bytes[..<n], as: UTF8.self) == CookbookReference.normalize(input))
        }
    }

    @Test func appendsToAByteBufferWithoutTouchingWhatIsThere() throws {
        var buffer = ByteBuffer(string: "prefix=")
        try Array("<a/>".utf8).withUnsafeBytes { raw in
            try CookbookEncoder.encode(raw, into: &buffer)
        }
        #expect(String(buffer: buffer) == "prefix=PGEvPg%3D%3D")
    }
}
