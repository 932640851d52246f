import CXMLSec

/// Decides whether the cookbook-normalized document means what the verified original means,
/// for responses whose signature the normalization breaks (IdPs that sign a `SignedInfo` with
/// line breaks in it).
///
/// Normalization works on bytes, blind to markup: deleting a line break inside `-\n->`,
/// `]]\n>` or `?\n>` ends a comment, CDATA section or processing instruction early and turns
/// hidden text into elements; inside a tag it changes attribute values or names. So the two
/// documents are compared as trees, node by node in document order:
/// - the same node types in the same places (no comment, CDATA or processing-instruction
///   boundary moved, no element gained or lost);
/// - elements: the same name, namespace (prefix and URI), namespace declarations (in order)
///   and attributes (in order: name, namespace and value byte for byte);
/// - text, CDATA, comment and processing-instruction content equal once both sides are put
///   through the cookbook's own whitespace rule (``WhitespaceCanonicalText``), the only
///   difference normalization may make.
/// Text and CDATA nodes whose canonical form is empty (only line breaks) are skipped on both
/// sides. The walk is iterative and linear in the size of the documents.
enum DocumentEquivalence {
    static func equivalent(_ original: borrowing ParsedDocument, _ normalized: borrowing ParsedDocument) -> Bool {
        var a = significant(original.doc.pointee.children)
        var b = significant(normalized.doc.pointee.children)
        // Pre-order walk of both trees in step, from the document's top-level nodes. Invariant:
        // every node before `a` in document order equals its counterpart before `b`, so both
        // cursors are at the same depth and the same position.
        while let nodeA = a {
            guard let nodeB = b, sameNode(nodeA, nodeB) else { return false }
            let childA = nodeA.pointee.type == XML_ELEMENT_NODE ? significant(nodeA.pointee.children) : nil
            let childB = nodeB.pointee.type == XML_ELEMENT_NODE ? significant(nodeB.pointee.children) : nil
            if childA != nil || childB != nil {
                guard childA != nil && childB != nil else { return false }
                a = childA
                b = childB
                continue
            }
            // Next in document order: the next sibling, else that of the nearest ancestor that
            // has one. Both sides take the same steps, or the trees differ.
            var cursorA = nodeA
            var cursorB = nodeB
            while true {
                let nextA = significant(cursorA.pointee.next)
                let nextB = significant(cursorB.pointee.next)
                if nextA != nil || nextB != nil {
                    guard nextA != nil && nextB != nil else { return false }
                    a = nextA
                    b = nextB
                    break
                }
                guard let upA = cursorA.pointee.parent, upA.pointee.type == XML_ELEMENT_NODE,
                    let upB = cursorB.pointee.parent, upB.pointee.type == XML_ELEMENT_NODE
                else {
                    // Past the last top-level node: both walks are complete.
                    return true
                }
                cursorA = upA
                cursorB = upB
            }
        }
        return b == nil
    }

    /// `node` or the first sibling after it that is not text or CDATA made only of line breaks:
    /// normalization deletes such text entirely (`<a>\n</a>` becomes `<a></a>`), and libxml2
    /// then has no node for it at all.
    private static func significant(_ node: UnsafeMutablePointer<xmlNode>?) -> UnsafeMutablePointer<xmlNode>? {
        var node = node
        while let current = node, current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
            WhitespaceCanonicalText.isEmpty(current.pointee.content)
        {
            node = current.pointee.next
        }
        return node
    }

    /// One node against its counterpart, children not included.
    private static func sameNode(_ a: UnsafeMutablePointer<xmlNode>, _ b: UnsafeMutablePointer<xmlNode>) -> Bool {
        guard a.pointee.type == b.pointee.type else { return false }
        switch a.pointee.type {
        case XML_ELEMENT_NODE:
            return sameString(a.pointee.name, b.pointee.name) && sameNamespace(a.pointee.ns, b.pointee.ns)
                && sameDeclarations(a.pointee.nsDef, b.pointee.nsDef) && sameAttributes(a.pointee.properties, b.pointee.properties)
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE, XML_COMMENT_NODE:
            return WhitespaceCanonicalText.equal(a.pointee.content, b.pointee.content)
        case XML_PI_NODE:
            return sameString(a.pointee.name, b.pointee.name) && WhitespaceCanonicalText.equal(a.pointee.content, b.pointee.content)
        default:
            // Entity references and anything else SAML does not carry: never called equivalent.
            return false
        }
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
