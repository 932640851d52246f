import CXMLSec
import SAMLEncoding

// MARK: - XMLTree

/// Small, allocation-free helpers over libxml2's tree for the shapes SAML uses.
///
/// Navigation is deliberately limited to *direct children*: the verifier never searches
/// descendants for something it will trust, which is what signature-wrapping attacks exploit.
enum XMLTree {
    typealias Node = UnsafeMutablePointer<xmlNode>

    @inline(__always)
    static func equals(_ a: UnsafePointer<xmlChar>?, _ b: StaticString) -> Bool {
        guard let a else { return false }
        return equal(a, b.utf8Start, count: b.utf8CodeUnitCount)
    }

    /// Whether the NUL-terminated `a` is exactly the `count` bytes at `b` (no NUL among them).
    /// Compared here rather than by libxml2's `xmlStrEqual`: most comparisons end at the first
    /// byte, and a call into the library costs more than that.
    @inline(__always)
    static func equal(_ a: UnsafePointer<xmlChar>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        var i = 0
        while i < count {
            // A shorter `a` stops here too: its NUL differs from every byte of `b`.
            guard a[i] == b[i] else { return false }
            i += 1
        }
        return a[count] == 0
    }

    /// Whether two NUL-terminated strings are equal (the same pointer is: libxml2's dictionary
    /// gives one name one pointer within a document).
    @inline(__always)
    static func equal(_ a: UnsafePointer<xmlChar>, _ b: UnsafePointer<xmlChar>) -> Bool {
        if a == b { return true }
        var i = 0
        while a[i] == b[i] {
            if a[i] == 0 { return true }
            i += 1
        }
        return false
    }

    /// `true` when `node` is an element named `local` in namespace `ns`.
    @inline(__always)
    static func isElement(_ node: Node, _ local: StaticString, ns: StaticString) -> Bool {
        guard node.pointee.type == XML_ELEMENT_NODE, equals(node.pointee.name, local) else { return false }
        guard let nsPtr = node.pointee.ns else { return false }
        return equals(nsPtr.pointee.href, ns)
    }

    /// The element children of `node`, in document order.
    static func childElements(_ node: Node) -> ChildElements {
        ChildElements(first: node.pointee.children)
    }

    /// The direct element children named `local` in `ns`, in document order, walked as they are
    /// read (no array).
    static func children(_ node: Node, _ local: StaticString, ns: StaticString) -> NamedChildren {
        NamedChildren(elements: childElements(node), local: local, ns: ns)
    }

    /// The single direct child named `local` in `ns`; `nil` when absent; throws when repeated.
    static func uniqueChild(_ node: Node, _ local: StaticString, ns: StaticString) throws(VerificationError) -> Node? {
        var found: Node?
        for child in childElements(node) where isElement(child, local, ns: ns) {
            if found != nil {
                throw VerificationError(.malformedXML, "more than one \(local) element")
            }
            found = child
        }
        return found
    }

    /// The first element child (ignoring text and comments), or `nil`.
    static func firstChildElement(_ node: Node) -> Node? {
        var iterator = childElements(node).makeIterator()
        return iterator.next()
    }

    /// The value of the attribute `name` that has no namespace, or `nil`.
    static func attribute(_ node: Node, _ name: StaticString) -> String? {
        // Fast path: the value is a single text node (always so without entities).
        if let attr = attributeNode(node, name), let text = attr.pointee.children, text.pointee.next == nil,
            text.pointee.type == XML_TEXT_NODE, let content = text.pointee.content
        {
            return String(cString: content)
        }
        guard let raw = xmlGetNoNsProp(node, name.utf8Start) else { return nil }
        defer { cxmlsec_xml_free(raw) }
        return String(cString: raw)
    }

    /// The attribute node (not the value) named `name` without namespace, or `nil`.
    static func attributeNode(_ node: Node, _ name: StaticString) -> UnsafeMutablePointer<xmlAttr>? {
        var attr = node.pointee.properties
        while let current = attr {
            if current.pointee.ns == nil && equals(current.pointee.name, name) {
                return current
            }
            attr = current.pointee.next
        }
        return nil
    }

    /// Whether `node` carries an attribute called `name` in some namespace (`x:name`).
    static func hasNamespacedAttribute(_ node: Node, _ name: StaticString) -> Bool {
        var attr = node.pointee.properties
        while let current = attr {
            if current.pointee.ns != nil && equals(current.pointee.name, name) { return true }
            attr = current.pointee.next
        }
        return false
    }

    /// The full text content of `node`: every text and CDATA descendant concatenated, comments
    /// skipped. A comment splitting a text node (`alice@example.com<!---->.evil.com`) therefore
    /// cannot truncate the value, which is the 2017 comment-injection class of bugs.
    static func textContent(_ node: Node) -> String {
        // Fast path: exactly one text child and nothing else (no comment, CDATA or element).
        if let only = node.pointee.children, only.pointee.next == nil, only.pointee.type == XML_TEXT_NODE,
            let content = only.pointee.content
        {
            return String(cString: content)
        }
        guard let raw = xmlNodeGetContent(node) else { return "" }
        defer { cxmlsec_xml_free(raw) }
        return String(cString: raw)
    }

    /// ``textContent(_:)`` without leading or trailing XML whitespace.
    static func trimmedText(_ node: Node) -> String {
        trimXMLWhitespace(textContent(node))
    }

    /// Whether `text` is empty or only XML white space.
    static func isXMLWhitespace(_ text: UnsafePointer<xmlChar>?) -> Bool {
        guard var p = text else { return true }
        while p.pointee != 0 {
            guard p.pointee.isXMLWhitespace else { return false }
            p += 1
        }
        return true
    }

    static func trimXMLWhitespace(_ value: String) -> String {
        let utf8 = value.utf8
        guard let first = utf8.firstIndex(where: { !$0.isXMLWhitespace }) else { return "" }
        let last = utf8.lastIndex(where: { !$0.isXMLWhitespace })!
        if first == utf8.startIndex && last == utf8.index(before: utf8.endIndex) { return value }
        return String(value[first...last])
    }

    /// Iterates the element children of a node.
    struct ChildElements: Sequence, IteratorProtocol {
        var current: UnsafeMutablePointer<xmlNode>?

        init(first: UnsafeMutablePointer<xmlNode>?) {
            current = first
        }

        mutating func next() -> Node? {
            while let node = current {
                current = node.pointee.next
                if node.pointee.type == XML_ELEMENT_NODE {
                    return node
                }
            }
            return nil
        }
    }

    /// Iterates the element children of a node that have one name in one namespace.
    struct NamedChildren: Sequence, IteratorProtocol {
        var elements: ChildElements
        let local: StaticString
        let ns: StaticString

        mutating func next() -> Node? {
            while let node = elements.next() {
                if isElement(node, local, ns: ns) { return node }
            }
            return nil
        }
    }
}

// MARK: - SAMLNamespace

/// Namespace URIs and names this module matches elements against.
///
/// Elements are always matched by namespace URI and local name, never by prefix.
enum SAMLNamespace {
    static let protocolNS: StaticString = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertionNS: StaticString = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let dsigNS: StaticString = "http://www.w3.org/2000/09/xmldsig#"
    static let metadataNS: StaticString = "urn:oasis:names:tc:SAML:2.0:metadata"

    /// XInclude 1.0 and its 2001 draft: an `include` element asks the reader to fetch and
    /// splice in other content.
    static let xinclude: StaticString = "http://www.w3.org/2001/XInclude"
    static let xincludeDraft: StaticString = "http://www.w3.org/2003/XInclude"

    static func isXInclude(_ href: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(href, xinclude) || XMLTree.equals(href, xincludeDraft)
    }

    /// The SAML assertion or protocol namespace.
    static func isSAML(_ href: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(href, assertionNS) || XMLTree.equals(href, protocolNS)
    }

    static let statusSuccess = "urn:oasis:names:tc:SAML:2.0:status:Success"
    static let bearer = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
}
