import CookbookReference
import Foundation
import NIOCore
import SAMLEncoding
import Testing

/// Fuzz finding `encoding` #1 (docs/robustness.md): the cookbook's normalization is not
/// idempotent. Runs of blanks are collapsed *before* newlines are deleted, so a blank, a newline
/// and a blank (`"a \n b"`) become two blanks (`"a  b"`), which a second normalization collapses
/// to one. A value that arrives base64 or encoded is therefore normalized only when the cookbook
/// could not have produced its document (``WhitespaceNormalizer/isNormalizationResult(_:)``), so
/// the cookbook's own value comes out unchanged.
@Suite struct WhitespaceRunReencodingTests {
    /// The reduced input (from the fuzzer's `tiny-whitespace.xml` seed).
    static let xml = "<r>a \n b</r>"

    @Test func theCookbookNormalizationIsNotIdempotent() {
        let once = CookbookReference.normalize(Self.xml)
        #expect(once == "<r>a  b</r>")
        #expect(CookbookReference.normalize(once) == "<r>a b</r>")
    }

    @Test func decodingTheAnyFormOutputGivesTheNormalizedInput() throws {
        let (form, encoded) = try Fast.encodeAnyForm(Array(Self.xml.utf8))
        #expect(form == .raw)
        #expect(encoded == CookbookReference.encode(Self.xml))
        #expect(try Fast.decode(Array(encoded.utf8)) == Array(CookbookReference.normalize(Self.xml).utf8))
    }

    @Test func theCookbooksOwnValueComesOutUnchanged() throws {
        let cookbook = CookbookReference.encode(Self.xml)
        let (form, again) = try Fast.encodeAnyForm(Array(cookbook.utf8))
        #expect(form == .encoded)
        #expect(again == cookbook)
        // Base64 of the normalized document (not through the encoder's base64 stage, which would
        // normalize it again): the cookbook's value too.
        let base64 = Array(CookbookReference.normalize(Self.xml).utf8).base64
        #expect(try Fast.encodeAnyForm(Array(base64.utf8)) == (.base64, cookbook))
    }

    @Test func aDecodedDocumentTheCookbookCouldNotProduceIsNormalized() throws {
        // Base64 of un-normalized XML (a line break, a tab, a blank at the end): as the cookbook.
        for xml in ["<r>a \n b</r>", "<r>a\tb</r>", "<r/> ", "\u{2028}<r/>", "<r>a\u{85}b</r>"] {
            let plain = Array(xml.utf8).base64
            #expect(try Fast.encodeAnyForm(Array(plain.utf8)) == (.base64, CookbookReference.encode(xml)), "\(xml.debugDescription)")
        }
    }

    /// Every output of the cookbook's normalization is recognised as one, and a document with a
    /// tab, a newline or a trimmable end is not (the oracle is the cookbook's own code).
    @Test(arguments: [
        "<r>a \n b</r>", "<r>a  b</r>", " \u{3000}<r/>\u{A0} ", "<r>\u{2028}x\u{2029}</r>", "\u{FEFF}<r/>",
        "<r>a\u{0B}\u{0C}b\r\n</r>", "<r>\u{200B}</r>", "", " ", "\t", "<r>é \u{85} ü</r>",
    ])
    func normalizationResults(_ text: String) {
        let normalized = CookbookReference.normalize(text)
        #expect(Self.isResult(normalized))
        let hasTabOrNewline = text.unicodeScalars.contains { [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029].contains($0.value) }
        let hasTrimmableEnd = text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.count != text.unicodeScalars.count
        #expect(Self.isResult(text) == !(hasTabOrNewline || hasTrimmableEnd), "\(text.debugDescription)")
    }

    static func isResult(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { WhitespaceNormalizer.isNormalizationResult($0) }
    }
}

extension Array where Element == UInt8 {
    /// Plain base64 of the bytes, without the cookbook's normalization.
    fileprivate var base64: String {
        var buffer = ByteBuffer()
        withUnsafeBytes { raw in
            _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: (raw.count + 2) / 3 * 4) { Base64.encode(raw, into: $0) }
        }
        return String(buffer: buffer)
    }
}
