import CXMLSec
import SAMLEncoding

// MARK: - DocumentEquivalence

/// Decides whether the cookbook-normalized document means what the verified original means,
/// for responses whose signature the normalization breaks (IdPs that sign a `SignedInfo` with
/// line breaks in it).
///
/// Normalization works on bytes, blind to markup: deleting a line break inside `-\n->`,
/// `]]\n>` or `?\n>` ends a comment, CDATA section or processing instruction early and turns
/// hidden text into elements; inside a tag it changes attribute values or names; inside a value
/// it changes the value (`vic\u{2028}tim@example.com` becomes another user's NameID). So the
/// two documents are compared as trees, node by node in document order:
/// - the same node types in the same places (no comment or CDATA boundary moved, no element
///   gained or lost);
/// - elements: the same name, namespace (prefix and URI), namespace declarations (in order)
///   and attributes (in order: name, namespace and value byte for byte);
/// - text and CDATA byte for byte — a backend reads them as values — except where whitespace
///   carries no meaning:
///   - layout: in an element whose text is all XML whitespace (element-only content, or an empty
///     value such as `<AttributeStatement>\n</AttributeStatement>`), that text is skipped on
///     both sides;
///   - the ends of a value: the XML whitespace before its first and after its last character
///     (`<NameID>\n  alice@example.com\n</NameID>`: SAML libraries trim them, and the
///     cookbook's code the app runs without samlgate changes them the same way); everything
///     between, line breaks, tabs and runs of spaces included, is compared byte for byte;
///   - the base64 content of the signature elements (`SignatureValue`, `DigestValue`,
///     `X509Certificate` …), equal under the cookbook's rule (``WhitespaceCanonicalText``);
/// - comments equal under the cookbook's whitespace rule (no backend reads them as a value:
///   text content skips comments).
/// A value split by comments (`vic<!---->\n<!---->tim`) keeps its inner text exact: the line
/// break between the pieces is inside the value. The walk is recursive over element depth
/// (bounded by the parser's depth limit) and linear in the size of the documents.
enum DocumentEquivalence {
    static func equivalent(_ original: borrowing ParsedDocument, _ normalized: borrowing ParsedDocument) -> Bool {
        sameChildren(original.doc.pointee.children, normalized.doc.pointee.children, rule: .value)
    }

    /// How the text children of one element are compared.
    private enum TextRule {
        /// A value: byte for byte, except XML whitespace at its two ends.
        case value
        /// All of the element's text is XML whitespace: layout, skipped.
        case layout
        /// Base64 in a signature element: equal under the cookbook's whitespace rule.
        case base64
    }

    /// The child lists of two corresponding nodes, in step.
    private static func sameChildren(_ a: UnsafeMutablePointer<xmlNode>?, _ b: UnsafeMutablePointer<xmlNode>?, rule: TextRule) -> Bool {
        // A value's ends: before its first text node's first character, after its last's last.
        let lastTextA = rule == .value ? lastText(from: a) : nil
        let lastTextB = rule == .value ? lastText(from: b) : nil
        var seenText = false
        var a = next(a, rule: rule)
        var b = next(b, rule: rule)
        while let nodeA = a {
            guard let nodeB = b, nodeA.pointee.type == nodeB.pointee.type else { return false }
            switch nodeA.pointee.type {
            case XML_ELEMENT_NODE:
                let ruleA = textRule(of: nodeA)
                guard sameElement(nodeA, nodeB), ruleA == textRule(of: nodeB),
                    sameChildren(nodeA.pointee.children, nodeB.pointee.children, rule: ruleA)
                else { return false }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                let same =
                    rule == .base64
                    ? WhitespaceCanonicalText.equal(nodeA.pointee.content, nodeB.pointee.content)
                    : sameValueText(
                        nodeA.pointee.content, nodeB.pointee.content, trimmingStart: !seenText,
                        trimmingEnd: nodeA == lastTextA && nodeB == lastTextB)
                guard same else { return false }
                seenText = true
            case XML_COMMENT_NODE:
                guard WhitespaceCanonicalText.equal(nodeA.pointee.content, nodeB.pointee.content) else { return false }
            default:
                // Processing instructions (refused in responses before this runs), entity references
                // and anything else SAML does not carry: never called equivalent.
                return false
            }
            a = next(nodeA.pointee.next, rule: rule)
            b = next(nodeB.pointee.next, rule: rule)
        }
        return b == nil
    }

    /// `node` or the first sibling after it that is not skipped under `rule`: layout whitespace,
    /// or base64 text whose canonical form is empty. (Normalization deletes text made only of
    /// line breaks entirely — `<a>\n</a>` becomes `<a></a>` — and libxml2 then has no node for it.)
    private static func next(_ node: UnsafeMutablePointer<xmlNode>?, rule: TextRule) -> UnsafeMutablePointer<xmlNode>? {
        guard rule != .value else { return node }
        var node = node
        while let current = node, isText(current) {
            let skipped =
                rule == .layout ? XMLTree.isXMLWhitespace(current.pointee.content) : WhitespaceCanonicalText.isEmpty(current.pointee.content)
            guard skipped else { break }
            node = current.pointee.next
        }
        return node
    }

    /// The last text or CDATA node among `first` and its following siblings.
    private static func lastText(from first: UnsafeMutablePointer<xmlNode>?) -> UnsafeMutablePointer<xmlNode>? {
        var last: UnsafeMutablePointer<xmlNode>?
        var node = first
        while let current = node {
            if isText(current) { last = current }
            node = current.pointee.next
        }
        return last
    }

    @inline(__always)
    private static func isText(_ node: UnsafeMutablePointer<xmlNode>) -> Bool {
        node.pointee.type == XML_TEXT_NODE || node.pointee.type == XML_CDATA_SECTION_NODE
    }

    /// Two pieces of a value, byte for byte once the XML whitespace at the value's start (when
    /// `trimmingStart`) and end (when `trimmingEnd`) is set aside.
    private static func sameValueText(
        _ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?, trimmingStart: Bool, trimmingEnd: Bool
    ) -> Bool {
        let coreA = core(a, trimmingStart: trimmingStart, trimmingEnd: trimmingEnd)
        let coreB = core(b, trimmingStart: trimmingStart, trimmingEnd: trimmingEnd)
        guard coreA.count == coreB.count else { return false }
        guard coreA.count > 0, let startA = coreA.start, let startB = coreB.start else { return true }
        return memcmp(startA, startB, coreA.count) == 0
    }

    /// The bytes of `text` without the XML whitespace at the ends asked for.
    private static func core(
        _ text: UnsafePointer<xmlChar>?, trimmingStart: Bool, trimmingEnd: Bool
    ) -> (start: UnsafePointer<xmlChar>?, count: Int) {
        guard let text else { return (nil, 0) }
        var start = 0
        var end = Int(xmlStrlen(text))
        if trimmingStart {
            while start < end && text[start].isXMLWhitespace { start += 1 }
        }
        if trimmingEnd {
            while end > start && text[end - 1].isXMLWhitespace { end -= 1 }
        }
        return (text + start, end - start)
    }

    /// Two elements, children not included.
    private static func sameElement(_ a: UnsafeMutablePointer<xmlNode>, _ b: UnsafeMutablePointer<xmlNode>) -> Bool {
        sameString(a.pointee.name, b.pointee.name) && sameNamespace(a.pointee.ns, b.pointee.ns)
            && sameDeclarations(a.pointee.nsDef, b.pointee.nsDef) && sameAttributes(a.pointee.properties, b.pointee.properties)
    }

    /// The rule for the text children of `element`: base64 for the signature's base64 elements,
    /// layout when every text child is XML whitespace, a value otherwise. One pass over the children.
    private static func textRule(of element: UnsafeMutablePointer<xmlNode>) -> TextRule {
        if let ns = element.pointee.ns, XMLTree.equals(ns.pointee.href, SAMLNamespace.dsigNS), isBase64Element(element.pointee.name) {
            return .base64
        }
        var child = element.pointee.children
        while let current = child {
            if isText(current), !XMLTree.isXMLWhitespace(current.pointee.content) { return .value }
            child = current.pointee.next
        }
        return .layout
    }

    /// XML Signature elements whose content is base64 (whitespace allowed inside by the schema).
    private static func isBase64Element(_ name: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(name, "SignatureValue") || XMLTree.equals(name, "DigestValue") || XMLTree.equals(name, "X509Certificate")
            || XMLTree.equals(name, "X509CRL") || XMLTree.equals(name, "X509SKI") || XMLTree.equals(name, "Modulus")
            || XMLTree.equals(name, "Exponent")
    }

    private static func sameNamespace(_ a: UnsafeMutablePointer<xmlNs>?, _ b: UnsafeMutablePointer<xmlNs>?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return sameString(a.pointee.prefix, b.pointee.prefix) && sameString(a.pointee.href, b.pointee.href)
    }

    private static func sameDeclarations(_ a: UnsafeMutablePointer<xmlNs>?, _ b: UnsafeMutablePointer<xmlNs>?) -> Bool {
        var a = a
        var b = b
        while let nsA = a, let nsB = b {
            guard sameNamespace(nsA, nsB) else { return false }
            a = nsA.pointee.next
            b = nsB.pointee.next
        }
        return a == nil && b == nil
    }

    /// Attribute values compared exactly: the cookbook must not touch them at all.
    private static func sameAttributes(_ a: UnsafeMutablePointer<xmlAttr>?, _ b: UnsafeMutablePointer<xmlAttr>?) -> Bool {
        var a = a
        var b = b
        while let attrA = a, let attrB = b {
            guard sameString(attrA.pointee.name, attrB.pointee.name), sameNamespace(attrA.pointee.ns, attrB.pointee.ns) else { return false }
            var childA = attrA.pointee.children
            var childB = attrB.pointee.children
            while let textA = childA, let textB = childB {
                guard textA.pointee.type == XML_TEXT_NODE, textB.pointee.type == XML_TEXT_NODE,
                    sameString(textA.pointee.content, textB.pointee.content)
                else { return false }
                childA = textA.pointee.next
                childB = textB.pointee.next
            }
            guard childA == nil && childB == nil else { return false }
            a = attrA.pointee.next
            b = attrB.pointee.next
        }
        return a == nil && b == nil
    }

    private static func sameString(_ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return xmlStrEqual(a, b) == 1
    }
}

// MARK: - WhitespaceCanonicalText

/// Compares two texts the way the cookbook's whitespace rule sees them, without allocating:
/// each run of spaces and tabs counts as one space, and the seven line terminators the cookbook
/// deletes (LF, VT, FF, CR, NEL, LS, PS) count as nothing — in that order, as the cookbook does,
/// so the spaces on both sides of a deleted line break stay two spaces.
///
/// Used on the content of text, CDATA, comment and processing-instruction nodes, where the
/// cookbook's normalization may legitimately change whitespace and nothing else.
enum WhitespaceCanonicalText {
    static func equal(_ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        // Invariant: the canonical forms of the texts before `a` and before `b` are equal.
        while true {
            let x = next(&a)
            let y = next(&b)
            if x != y { return false }
            if x == 0 { return true }
        }
    }

    /// Whether the canonical form of `text` is empty (nothing but line terminators).
    static func isEmpty(_ text: UnsafePointer<xmlChar>?) -> Bool {
        guard var text else { return true }
        return next(&text) == 0
    }

    /// The next byte of the canonical form (0 at the end), advancing `p` past what it consumed.
    @inline(__always)
    private static func next(_ p: inout UnsafePointer<xmlChar>) -> UInt8 {
        while true {
            let byte = p.pointee
            switch byte {
            case 0:
                return 0
            case 0x20, 0x09:
                repeat { p += 1 } while p.pointee == 0x20 || p.pointee == 0x09
                return 0x20
            case 0x0A, 0x0B, 0x0C, 0x0D:
                p += 1
            case 0xC2 where p[1] == 0x85:
                p += 2
            case 0xE2 where p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9):
                p += 3
            default:
                p += 1
                return byte
            }
        }
    }
}
