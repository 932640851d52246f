import CLITestSupport
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification
import Testing

/// A ``VerifiedDocument`` holds exactly the bytes verified, and encodes exactly those.
@Suite struct VerifiedDocumentTests {
    /// Verifies `xml`, decoded from a value in `form`, for forwarding.
    static func verified(
        _ xml: [UInt8], decodedFrom form: SAMLForm = .raw, fallback: NormalizationFallback = .equivalentTree
    ) throws -> VerifiedDocument {
        try Fixtures.verifier().verifyForForwarding(UnverifiedDocument(xml, decodedFrom: form), fallback: fallback, mvpd: Fixtures.mvpd)
    }

    /// What the value `document` encodes to decodes to.
    static func decodedEncoding(of document: VerifiedDocument) throws -> [UInt8] {
        var encoded = ByteBuffer()
        document.encode(into: &encoded)
        #expect(encoded.readableBytes <= document.maximumEncodedCount)
        var decoded = ByteBuffer()
        try encoded.withUnsafeReadableBytes { bytes throws(SAMLEncodingError) in try CookbookDecoder.decode(bytes, into: &decoded) }
        return Array(decoded.readableBytesView)
    }

    /// The cookbook's normalization of `xml`.
    static func normalization(of xml: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: xml.count)
        let count = xml.withUnsafeBytes { input in output.withUnsafeMutableBytes { WhitespaceNormalizer.normalize(input, into: $0) } }
        return Array(output[..<count])
    }

    @Test func theEncodingDecodesToTheVerifiedNormalization() throws {
        // Whitespace outside the signed element: the normalized document verifies on its own.
        let xml = Array(Fixtures.issue(.assertion).replacingFirst("<samlp:Status>", with: "\n\t <samlp:Status>").utf8)
        let document = try Self.verified(xml)
        #expect(document.normalization == .verified)
        #expect(document.response.normalization == .verified)
        #expect(document.bytes == Self.normalization(of: xml))
        #expect(document.bytes != xml)
        #expect(try Self.decodedEncoding(of: document) == document.bytes)
        #expect(document.response.nameID == "alice@example.com")
    }

    @Test func anEquivalentTreeForwardsTheNormalization() throws {
        let xml = Array(Fixtures.issue(.both) { $0.pretty = true }.utf8)
        let document = try Self.verified(xml)
        #expect(document.normalization == .equivalent)
        #expect(document.bytes == Self.normalization(of: xml))
        #expect(try Self.decodedEncoding(of: document) == document.bytes)
    }

    @Test func theSignaturePreservingFallbackForwardsTheOriginal() throws {
        let xml = Array(Fixtures.issue(.assertion) { $0.signedInfoLineBreaks = true }.utf8)
        let document = try Self.verified(xml, fallback: .original)
        #expect(document.normalization == .original)
        #expect(document.normalization.forwardsOriginal)
        #expect(document.bytes == xml)
        #expect(try Self.decodedEncoding(of: document) == xml)
    }

    @Test func aValueTheCookbookNormalizedIsKeptByteForByte() throws {
        // Two spaces where a line break stood, and no line break left: normalizing again would
        // fold them to one.
        let text = Fixtures.issue(.assertion).replacingFirst("?>\n", with: "?>").replacingFirst("<samlp:Status>", with: "  <samlp:Status>")
        let xml = Array(text.trimmingCharacters(in: .newlines).utf8)
        #expect(xml.withUnsafeBytes { WhitespaceNormalizer.isNormalizationResult($0) })
        #expect(Self.normalization(of: xml) != xml)
        let document = try Self.verified(xml, decodedFrom: .base64)
        #expect(document.normalization == .unchanged)
        #expect(document.bytes == xml)
        #expect(try Self.decodedEncoding(of: document) == xml)
        // Raw XML is always normalized.
        #expect(try Self.verified(xml).bytes == Self.normalization(of: xml))
    }

    @Test func invalidUTF8IsRefusedBeforeVerification() throws {
        // Without the prolog's line break: already a normalization result, so the base64 form is
        // validated as it is kept, the raw one as it is normalized.
        let text = Fixtures.issue(.assertion).replacingFirst("?>\n", with: "?>").trimmingCharacters(in: .newlines)
        var xml = Array(text.utf8)
        #expect(xml.withUnsafeBytes { WhitespaceNormalizer.isNormalizationResult($0) })
        xml.insert(0xFF, at: xml.count - 10)
        for form in [SAMLForm.raw, .base64] {
            #expect {
                _ = try UnverifiedDocument(xml, decodedFrom: form)
            } throws: { error in
                (error as? SAMLEncodingError)?.code == .invalidUTF8
            }
        }
    }
}
