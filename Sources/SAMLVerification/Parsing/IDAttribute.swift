import CXMLSec

/// The `ID` attributes of a signed document, registered by the verifier itself: no DTD decides
/// what an ID is, and a second element claiming an ID already taken is refused (`duplicate_id`),
/// so a signature's `#ID` reference can only resolve to one element. Shared by the response
/// walk (``ResponseStructure``) and signed metadata (``MetadataSignature``).
enum IDAttribute {
    /// Registers the un-namespaced `ID` of `node` with `xmlAddID`; returns its value (owned by
    /// the document), or `nil` when the element has none.
    static func register(_ node: XMLTree.Node, in doc: UnsafeMutablePointer<xmlDoc>) throws(VerificationError) -> UnsafePointer<xmlChar>? {
        guard let attr = XMLTree.attributeNode(node, "ID") else { return nil }
        guard let text = attr.pointee.children, text.pointee.type == XML_TEXT_NODE, text.pointee.next == nil,
            let value = text.pointee.content, value.pointee != 0
        else {
            throw VerificationError(.malformedXML, "empty or non-text ID attribute")
        }
        // An ID must be a name. Anything else could be read by xmlsec as more
        // than a name: `#xpointer(...)` in a Reference runs an XPath expression, before
        // the signature is checked, with cost cubic in the document size.
        guard isNameLike(value) else {
            throw VerificationError(.malformedXML, "an ID attribute is not an XML name")
        }
        if xmlAddID(nil, doc, value, attr) == nil {
            throw VerificationError(.duplicateID, "two elements claim the same ID")
        }
        return UnsafePointer(value)
    }

    /// The first element at or after `start` among siblings; entity references are refused, and
    /// processing instructions too when `refusingProcessingInstructions` (`forbidden_markup`).
    static func nextElement(
        from start: UnsafeMutablePointer<xmlNode>?, refusingProcessingInstructions: Bool = false
    ) throws(VerificationError) -> XMLTree.Node? {
        var current = start
        while let node = current {
            switch node.pointee.type {
            case XML_ELEMENT_NODE:
                return node
            case XML_ENTITY_REF_NODE, XML_ENTITY_NODE, XML_DTD_NODE, XML_ENTITY_DECL:
                throw VerificationError(.forbiddenDTD, "entity references are not accepted")
            case XML_PI_NODE where refusingProcessingInstructions:
                throw VerificationError(.forbiddenMarkup, "processing instructions are not accepted")
            default:
                current = node.pointee.next
            }
        }
        return nil
    }

    /// Whether `value` is name-like: ASCII letters, digits, `.`, `-`, `_`, or non-ASCII bytes.
    /// Slightly wider than xs:ID's NCName (a leading digit is tolerated: some IdPs emit bare
    /// UUIDs), but never `(`, `/`, `[`, `#` or anything else XPointer syntax needs.
    static func isNameLike(_ value: UnsafePointer<xmlChar>) -> Bool {
        var p = value
        while p.pointee != 0 {
            let c = p.pointee
            let ok =
                (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
                || c == 0x5F || c == 0x2E || c == 0x2D || c >= 0x80
            guard ok else { return false }
            p += 1
        }
        return p != value
    }
}
