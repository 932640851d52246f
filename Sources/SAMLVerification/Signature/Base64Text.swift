import CXMLSec
import SAMLEncoding

/// The base64 content of a `SignatureValue` or `DigestValue`, decoded as xmlsec decodes it
/// (`xmlNodeGetContent`, whitespace skipped).
///
/// What identity providers write — one text node of strict base64, perhaps wrapped in lines —
/// goes through samlgate's own decoder (xmlsec's reads one character at a time through a
/// state machine: a few microseconds per signature). Anything else (blanks inside, several
/// text nodes, an entity, a value the strict decoder refuses) is decoded by xmlsec's decoder,
/// so the bytes are xmlsec's either way.
enum Base64Text {
    /// A `SignatureValue` text longer than this is no signature (RSA-16384 is 2,731 characters).
    static let maximumSignatureValue = 8192

    /// The decoded bytes; `nil` when the text is longer than `maximum` characters, not base64,
    /// or decodes to nothing.
    static func decode(_ node: XMLTree.Node, maximum: Int) -> [UInt8]? {
        if let only = node.pointee.children, only.pointee.next == nil, only.pointee.type == XML_TEXT_NODE,
            let content = only.pointee.content
        {
            let length = Int(xmlStrlen(content))
            guard length <= maximum else { return nil }
            if let strict = strict(UnsafeRawBufferPointer(start: content, count: length)) { return strict }
        }
        guard let text = xmlNodeGetContent(node) else { return nil }
        defer { cxmlsec_xml_free(text) }
        guard Int(xmlStrlen(text)) <= maximum else { return nil }
        var written: UInt32 = 0
        guard xmlSecBase64DecodeInPlace(text, &written) == 0, written > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(written)))
    }

    /// Strict base64 (line breaks skipped), or `nil` when the strict decoder refuses it.
    private static func strict(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: Base64.maximumDecodedCount(text.count)) { buffer, count in
            do {
                count = try Base64.decode(text, into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failed = true
                count = 0
            }
        }
        return failed || bytes.isEmpty ? nil : bytes
    }
}
