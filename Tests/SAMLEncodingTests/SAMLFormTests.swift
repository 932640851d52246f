import CookbookReference
import Foundation
import SAMLEncoding
import Testing

@Suite struct SAMLFormTests {
    static let xml = "<samlp:Response ID=\"_1\">\n  <saml:Assertion>ü+/=</saml:Assertion>\n</samlp:Response>\n"

    @Test func detectsEachForm() throws {
        let base64 = Data(Self.xml.utf8).base64EncodedString()
        #expect(try Fast.detect(Self.xml) == .raw)
        #expect(try Fast.detect("  \r\n\t" + Self.xml) == .raw)
        #expect(try Fast.detect("\u{FEFF}<a/>") == .raw)
        #expect(try Fast.detect(" \u{FEFF}<a/>") == .raw)
        #expect(try Fast.detect(base64) == .base64)
        #expect(try Fast.detect(base64 + "\n") == .base64)
        #expect(try Fast.detect(CookbookReference.encode(Self.xml)) == .encoded)
        #expect(try Fast.detect(Data("\u{FEFF}<a/>".utf8).base64EncodedString()) == .base64)
    }

    @Test func everyFormComesOutEncodedExactlyOnce() throws {
        let expected = CookbookReference.encode(Self.xml)
        let normalized = CookbookReference.normalize(Self.xml)
        let inputs: [(String, SAMLForm)] = [
            (Self.xml, .raw),
            (Data(Self.xml.utf8).base64EncodedString(), .base64),
            (Data(normalized.utf8).base64EncodedString(), .base64),
            (expected, .encoded),
            (expected + "\r\n", .encoded),
        ]
        for (input, form) in inputs {
            let (detected, encoded) = try Fast.encodeAnyForm(Array(input.utf8))
            #expect(detected == form)
            #expect(encoded == expected)
        }
    }

    @Test(arguments: [
        ("", SAMLEncodingError.Code.unrecognizedSAMLForm),
        ("   \n", .unrecognizedSAMLForm),
        ("hello world", .unrecognizedSAMLForm),
        ("{\"SAMLResponse\":1}", .unrecognizedSAMLForm),
        ("aGVsbG8gd29ybGQ=", .unrecognizedSAMLForm),  // base64 of "hello world"
        ("PGEvPg%253D%253D", .doubleEncoded),
        ("PGEvPg%3", .malformedPercentEncoding),
        ("PGEvPg%2C%3D", .unrecognizedSAMLForm),  // ',' is not base64
    ])
    func rejects(_ input: String, _ code: SAMLEncodingError.Code) {
        #expect {
            _ = try Fast.encodeAnyForm(Array(input.utf8))
        } throws: { error in
            (error as? SAMLEncodingError)?.code == code
        }
    }

    @Test func lateEscapesAreStillChecked() {
        let long = Data(("<r>" + String(repeating: "x", count: 300) + "</r>").utf8).base64EncodedString()
        for (suffix, code) in [("%253D", SAMLEncodingError.Code.doubleEncoded), ("%2C", .unrecognizedSAMLForm), ("%G", .malformedPercentEncoding)] {
            #expect {
                _ = try Fast.encodeAnyForm(Array((long + suffix).utf8))
            } throws: { error in
                (error as? SAMLEncodingError)?.code == code
            }
        }
    }

    /// Fuzz finding `encoding` #2: the 48-byte prefix detection decodes could end inside a
    /// multi-byte whitespace scalar after a BOM, and the cookbook's own value of a raw document
    /// was refused as not XML. Every cut position of U+2006 (three bytes) and U+00A0 (two).
    @Test(arguments: 0..<3, ["\u{2006}", "\u{A0}"])
    func whitespaceCutByThePrefixIsStillWhitespace(pad: Int, space: String) throws {
        let xml = "\u{FEFF}" + String(repeating: " ", count: pad) + String(repeating: space, count: 30) + "<r/>"
        let (form, value) = try Fast.encodeAnyForm(Array(xml.utf8))
        #expect(form == .raw)
        let again = try Fast.encodeAnyForm(Array(value.utf8))
        #expect(again.1 == value)
    }

    @Test func base64OfNonUTF8IsInvalidUTF8() {
        let value = Data([0x3C, 0x61, 0xFF, 0x3E]).base64EncodedString()
        #expect {
            _ = try Fast.encodeAnyForm(Array(value.utf8))
        } throws: { error in
            (error as? SAMLEncodingError)?.code == .invalidUTF8
        }
    }

    @Test func base64WithGarbageAfterAGoodPrefixIsMalformed() {
        let value = Data("<a>0123456789012345678901234567890123456789</a>".utf8).base64EncodedString() + "Zm9v="
        #expect {
            _ = try Fast.encodeAnyForm(Array(value.utf8))
        } throws: { error in
            (error as? SAMLEncodingError)?.code == .malformedBase64
        }
    }
}
