import CXMLSec

/// The base64 content of a `SignatureValue` or `DigestValue`, decoded as xmlsec decodes it
/// (`xmlNodeGetContent`, whitespace skipped).
enum Base64Text {
    /// The decoded bytes; `nil` when the text is longer than `maximum` characters, not base64,
    /// or decodes to nothing.
    static func decode(_ node: XMLTree.Node, maximum: Int) -> [UInt8]? {
        guard let text = xmlNodeGetContent(node) else { return nil }
        defer { cxmlsec_xml_free(text) }
        guard Int(xmlStrlen(text)) <= maximum else { return nil }
        var written: UInt32 = 0
        guard xmlSecBase64DecodeInPlace(text, &written) == 0, written > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(written)))
    }
}
