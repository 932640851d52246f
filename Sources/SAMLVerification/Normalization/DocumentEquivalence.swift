import CXMLSec

/// Decides whether the cookbook-normalized document means what the verified original means,
/// for responses whose signature the normalization breaks (IdPs that sign a `SignedInfo` with
/// line breaks in it).
///
/// Normalization works on bytes, blind to markup: deleting a line break inside `-\n->`,
/// `]]\n>` or `?\n>` ends a comment, CDATA section or processing instruction early and turns
/// hidden text into elements; inside a tag it changes attribute values or names; inside a value
/// it changes the value (`vic\u{2028}tim@example.com` becomes another user's NameID). So the
/// two documents are compared as trees, node by node in document order:
/// - the same node types in the same places (no comment, CDATA or processing-instruction
///   boundary moved, no element gained or lost);
/// - elements: the same name, namespace (prefix and URI), namespace declarations (in order)
///   and attributes (in order: name, namespace and value byte for byte);
/// - text and CDATA byte for byte — a backend reads them as values — with two exceptions, the
///   only places where whitespace carries no meaning:
///   - in element-only content (an element whose children are elements, comments and text made
///     of XML whitespace only), the whitespace-only text between the elements is layout and is
///     skipped on both sides;
///   - the base64 content of the signature elements (`SignatureValue`, `DigestValue`,
///     `X509Certificate` …) may differ in whitespace as the cookbook's rule
///     (``WhitespaceCanonicalText``) changes it;
/// - comments equal under the cookbook's whitespace rule (no backend reads them as a value:
///   text content skips comments).
/// Mixed content (`<NameID>vic<x/>\n<x/>tim</NameID>`) is not element-only: its text is compared
/// exactly, so a deleted line break between two pieces of a value is a difference. The walk is
/// recursive over element depth (bounded by the parser's depth limit) and linear in the size of
/// the documents.
enum DocumentEquivalence {
    static func equivalent(_ original: borrowing ParsedDocument, _ normalized: borrowing ParsedDocument) -> Bool {
        sameChildren(original.doc.pointee.children, normalized.doc.pointee.children, rule: .exact)
    }

    /// How text children of one element are compared.
    private enum TextRule {
        /// Byte for byte: the element's text is a value.
        case exact
        /// Element-only content: whitespace-only text is layout, skipped; other text exact
        /// (there is none, or the content would be mixed).
        case layout
        /// Base64 in a signature element: equal under the cookbook's whitespace rule.
        case base64
    }

    /// The child lists of two corresponding nodes, in step.
    private static func sameChildren(_ a: UnsafeMutablePointer<xmlNode>?, _ b: UnsafeMutablePointer<xmlNode>?, rule: TextRule) -> Bool {
        var a = next(a, rule: rule)
        var b = next(b, rule: rule)
        while let nodeA = a {
            guard let nodeB = b, sameNode(nodeA, nodeB, rule: rule) else { return false }
            if nodeA.pointee.type == XML_ELEMENT_NODE {
                let ruleA = textRule(of: nodeA)
                guard ruleA == textRule(of: nodeB), sameChildren(nodeA.pointee.children, nodeB.pointee.children, rule: ruleA) else {
                    return false
                }
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
        guard rule != .exact else { return node }
        var node = node
        while let current = node, current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE {
            let skipped =
                rule == .layout ? XMLTree.isXMLWhitespace(current.pointee.content) : WhitespaceCanonicalText.isEmpty(current.pointee.content)
            guard skipped else { break }
            node = current.pointee.next
        }
        return node
    }

    /// One node against its counterpart, children not included.
    private static func sameNode(_ a: UnsafeMutablePointer<xmlNode>, _ b: UnsafeMutablePointer<xmlNode>, rule: TextRule) -> Bool {
        guard a.pointee.type == b.pointee.type else { return false }
        switch a.pointee.type {
        case XML_ELEMENT_NODE:
            return sameString(a.pointee.name, b.pointee.name) && sameNamespace(a.pointee.ns, b.pointee.ns)
                && sameDeclarations(a.pointee.nsDef, b.pointee.nsDef) && sameAttributes(a.pointee.properties, b.pointee.properties)
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
            return rule == .base64
                ? WhitespaceCanonicalText.equal(a.pointee.content, b.pointee.content) : sameString(a.pointee.content, b.pointee.content)
        case XML_COMMENT_NODE:
            return WhitespaceCanonicalText.equal(a.pointee.content, b.pointee.content)
        default:
            // Processing instructions (refused in responses before this runs), entity references
            // and anything else SAML does not carry: never called equivalent.
            return false
        }
    }

    /// The rule for the text children of `element`: base64 for the signature's base64 elements,
    /// layout when every text child is XML whitespace and there is at least one element child,
    /// exact otherwise. One pass over the children.
    private static func textRule(of element: UnsafeMutablePointer<xmlNode>) -> TextRule {
        if let ns = element.pointee.ns, XMLTree.equals(ns.pointee.href, SAMLNamespace.dsigNS), isBase64Element(element.pointee.name) {
            return .base64
        }
        var hasElement = false
        var child = element.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                hasElement = true
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if !XMLTree.isXMLWhitespace(current.pointee.content) { return .exact }
            default:
                break
            }
            child = current.pointee.next
        }
        return hasElement ? .layout : .exact
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
