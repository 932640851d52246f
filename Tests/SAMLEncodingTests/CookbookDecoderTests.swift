import CLITestSupport
import CookbookReference
import Foundation
import SAMLEncoding
import Testing

@Suite struct CookbookDecoderTests {
    @Test func decodeInvertsEncodeUpToNormalization() throws {
        var rng = SeededGenerator(seed: 99)
        for _ in 0..<500 {
            let input = TrickyInput.make(using: &rng, maxPieces: 100)
            let encoded = try Fast.encode(input)
            let decoded = try Fast.decode(Array(encoded.utf8))
            #expect(String(decoding: decoded, as: UTF8.self) == CookbookReference.normalize(input))
        }
    }

    @Test func acceptsLowerCaseEscapesAndLineBreaks() throws {
        #expect(try Fast.decode(Array("PGEvPg%3d%3d".utf8)) == Array("<a/>".utf8))
        #expect(try Fast.decode(Array("PGEv\r\nPg==\n".utf8)) == Array("<a/>".utf8))
    }

    @Test(arguments: [
        ("%", 0), ("PGEv%3", 4), ("PG%zzEvPg", 2), ("abc%G1", 3),
    ])
    func malformedPercentEncoding(_ input: String, _ offset: Int) {
        #expect {
            _ = try Fast.decode(Array(input.utf8))
        } throws: { error in
            (error as? SAMLEncodingError)?.code == .malformedPercentEncoding && (error as? SAMLEncodingError)?.offset == offset
        }
    }

    @Test(arguments: ["PGEvPg=", "PGEv!g==", "PG=vPg==", "P===", "PGEvPg==PGEv", "PGE", "PGEv Pg=="])
    func malformedBase64(_ input: String) {
        #expect {
            _ = try Fast.decode(Array(input.utf8))
        } throws: { error in
            (error as? SAMLEncodingError)?.code == .malformedBase64
        }
    }

    @Test func emptyDecodesToEmpty() throws {
        #expect(try Fast.decode([]) == [])
    }
}
