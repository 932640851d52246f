import SAMLEncoding
import Testing

/// Fuzz finding `encoding` #1 (docs/robustness.md): the cookbook's normalization is not
/// idempotent. Runs of blanks are collapsed *before* newlines are deleted, so a blank, a newline
/// and a blank (`"a \n b"`) become two blanks (`"a  b"`), which a second normalization collapses
/// to one. A value the cookbook produced therefore does not always come out of
/// ``CookbookEncoder/encodeAnyForm(_:into:)-(_,ByteBuffer)`` unchanged (its doc comment says it
/// does): the encoded and base64 forms are decoded and normalized again. Nothing is encoded twice
/// and decoding still gives a normalized document; what changes is which normalization.
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

    @Test func theCookbooksOwnValueIsNormalizedAgain() throws {
        let cookbook = CookbookReference.encode(Self.xml)
        let (form, again) = try Fast.encodeAnyForm(Array(cookbook.utf8))
        #expect(form == .encoded)
        // Known: the second pass collapses the two blanks (see the type's comment); fixing it
        // means not normalizing values that arrive encoded, a change of the gateway's request path.
        withKnownIssue("encodeAnyForm normalizes an already-normalized document again") {
            #expect(again == cookbook)
        }
        #expect(try Fast.decode(Array(again.utf8)) == Array("<r>a b</r>".utf8))
    }
}
