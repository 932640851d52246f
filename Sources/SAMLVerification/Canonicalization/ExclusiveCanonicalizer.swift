import CXMLSec

// MARK: - ExclusiveCanonicalizer

/// Exclusive XML Canonicalization 1.0 of one element subtree, optionally minus one descendant subtree: exactly the two node sets a SAML
/// signature asks for (`Reference URI="#id"` + enveloped-signature transform, and the
/// `SignedInfo` element), written straight into a ``CanonicalBuffer``.
///
/// **Why it exists.** libxml2's `xmlC14NExecute` always walks the whole document and asks
/// xmlsec's node-set callback about every node, attribute and namespace, then writes through
/// an `xmlOutputBuffer` with a malloc per text node: about 0.9 M of the 2 M instructions of
/// an 8 KB verification. Walking only the signed subtree, with the node set known by shape,
/// costs a small fraction of that.
///
/// **Exactness.** The output must be byte-identical to libxml2's for the same node set, or
/// a genuine signature would fail (and, worse, two different documents could look alike).
/// The rules mirror libxml2 2.9's exclusive mode (`xmlExcC14NProcessNamespacesAxis`,
/// `xmlC14NAttrsCompare`, `xmlC11NNormalize…`), and tests compare both byte for byte on
/// every element of a corpus of signed responses and hand-written edge cases. An
/// `InclusiveNamespaces` prefix list (`PrefixList="xs"`, common in IdP output) is handled as
/// libxml2 handles it. Anything outside the well-trodden subset — `#default` in the prefix
/// list, entity references, attributes whose value is not one
/// text node, other node types or namespace URIs that are not plain absolute `http(s)://host…`
/// or `urn:` URIs anywhere in the document (libxml2 fails on both), a `"` in a printed namespace
/// URI — makes ``canonicalize(apex:excluding:withComments:into:)`` return `false`, and the
/// caller hands the node set to libxml2 instead. Declining is always safe.
struct ExclusiveCanonicalizer {
    private var namespaces = RenderedNamespaces()
    /// Scratch for one element's namespace declarations and attributes (kept for capacity).
    private var declarations: [UnsafeMutablePointer<xmlNs>] = []
    private var attributes: [UnsafeMutablePointer<xmlAttr>] = []
    /// The prefixes of the current `InclusiveNamespaces` list.
    private var inclusive: [UnsafePointer<xmlChar>] = []

    init() {
        declarations.reserveCapacity(8)
        attributes.reserveCapacity(16)
    }

    /// Writes the canonical form of `apex`'s subtree without `excluded`'s subtree into `out`
    /// (after whatever it already holds). `inclusivePrefixes` is the NULL-terminated
    /// `InclusiveNamespaces` prefix list, or nil. Returns `false`, with `out` in an
    /// unspecified state, when the document or list holds something left to libxml2.
    mutating func canonicalize(
        apex: XMLTree.Node, excluding excluded: XMLTree.Node?, withComments: Bool,
        inclusivePrefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>? = nil,
        into out: CanonicalBuffer
    ) -> Bool {
        guard apex.pointee.type == XML_ELEMENT_NODE, let doc = apex.pointee.doc,
            Self.documentIsPlain(doc)
        else { return false }
        inclusive.removeAll(keepingCapacity: true)
        if let list = inclusivePrefixes {
            var index = 0
            while let prefix = list[index] {
                // The default namespace in the list (`#default`) is not handled natively.
                if prefix.pointee == 0 || XMLTree.equals(UnsafePointer(prefix), "#default") { return false }
                inclusive.append(UnsafePointer(prefix))
                index += 1
            }
        }
        namespaces.removeAll()
        var node = apex
        walk: while true {
            switch node.pointee.type {
            case XML_ELEMENT_NODE:
                if node != excluded {
                    guard startTag(node, out) else { return false }
                    if let child = node.pointee.children {
                        node = child
                        continue walk
                    }
                    endTag(node, out)
                }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = node.pointee.content {
                    out.appendText(content)
                }
            case XML_COMMENT_NODE:
                if withComments {
                    out.append("<!--")
                    if let content = node.pointee.content {
                        out.appendMarkupContent(content)
                    }
                    out.append("-->")
                }
            case XML_PI_NODE:
                out.append("<?")
                out.append(cString: node.pointee.name)
                if let content = node.pointee.content, content.pointee != 0 {
                    out.append(UInt8(ascii: " "))
                    out.appendMarkupContent(content)
                }
                out.append("?>")
            default:
                // Entity references, XInclude markers and anything else: libxml2 decides.
                return false
            }
            // The next node in document order, closing the elements that end here.
            while node != apex {
                if let next = node.pointee.next {
                    node = next
                    continue walk
                }
                guard let parent = node.pointee.parent else { return false }
                node = parent
                endTag(node, out)
            }
            return true
        }
    }

    /// `<`, the QName, the namespace declarations exclusive C14N requires here, the sorted
    /// attributes, `>`. Also records what this element declares for its descendants.
    private mutating func startTag(_ element: XMLTree.Node, _ out: CanonicalBuffer) -> Bool {
        namespaces.openElement()
        out.append(UInt8(ascii: "<"))
        Self.appendQualifiedName(prefix: element.pointee.ns?.pointee.prefix, name: element.pointee.name, out)

        declarations.removeAll(keepingCapacity: true)
        // Prefixes of the InclusiveNamespaces list in scope here, treated as inclusive C14N does.
        for prefix in inclusive {
            if let ns = xmlSearchNs(element.pointee.doc, element, prefix), !Self.isXMLNamespace(ns) {
                let rendered = namespaces.isRenderedByParent(prefix: ns.pointee.prefix, href: ns.pointee.href)
                namespaces.push(ns)
                if !rendered { declarations.append(ns) }
            }
        }
        // Namespaces this element visibly utilizes: its own and its attributes' (never `xml`).
        var hasEmptyPrefix = false
        var utilizesEmptyDefault = false
        let elementNamespace: UnsafeMutablePointer<xmlNs>?
        if let ns = element.pointee.ns {
            elementNamespace = ns
        } else {
            elementNamespace = xmlSearchNs(element.pointee.doc, element, nil)
            utilizesEmptyDefault = true
        }
        if let ns = elementNamespace, !Self.isXMLNamespace(ns) {
            if !namespaces.isRendered(prefix: ns.pointee.prefix, href: ns.pointee.href) {
                declarations.append(ns)
            }
            namespaces.push(ns)
            if RenderedNamespaces.isEmpty(ns.pointee.prefix) { hasEmptyPrefix = true }
        }
        attributes.removeAll(keepingCapacity: true)
        var attribute = element.pointee.properties
        while let current = attribute {
            attributes.append(current)
            if let ns = current.pointee.ns, !Self.isXMLNamespace(ns) {
                let rendered = namespaces.isRendered(prefix: ns.pointee.prefix, href: ns.pointee.href)
                namespaces.push(ns)
                if !rendered { declarations.append(ns) }
                if RenderedNamespaces.isEmpty(ns.pointee.prefix) { hasEmptyPrefix = true }
            }
            attribute = current.pointee.next
        }
        // An unqualified element below a rendered default namespace undeclares it.
        if utilizesEmptyDefault && !hasEmptyPrefix && !namespaces.isRendered(prefix: nil, href: nil) {
            out.append(" xmlns=\"\"")
        }

        Self.sortByPrefix(&declarations)
        for ns in declarations {
            if let prefix = ns.pointee.prefix {
                out.append(" xmlns:")
                out.append(cString: prefix)
                out.append(UInt8(ascii: "="))
            } else {
                out.append(" xmlns=")
            }
            out.append(UInt8(ascii: "\""))
            if let href = ns.pointee.href {
                // libxml2 switches to single quotes around a URI holding `"`: leave that to it.
                guard xmlStrchr(href, UInt8(ascii: "\"")) == nil else { return false }
                out.append(cString: href)
            }
            out.append(UInt8(ascii: "\""))
        }

        Self.sortAttributes(&attributes)
        for current in attributes {
            out.append(UInt8(ascii: " "))
            let prefix = current.pointee.ns?.pointee.prefix
            Self.appendQualifiedName(prefix: prefix, name: current.pointee.name, out)
            out.append("=\"")
            if let value = current.pointee.children {
                // Without a DTD an attribute value is one text node; anything else goes to libxml2.
                guard value.pointee.type == XML_TEXT_NODE, value.pointee.next == nil else { return false }
                if let content = value.pointee.content {
                    out.appendAttributeValue(content)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: ">"))
        return true
    }

    private mutating func endTag(_ element: XMLTree.Node, _ out: CanonicalBuffer) {
        out.append("</")
        Self.appendQualifiedName(prefix: element.pointee.ns?.pointee.prefix, name: element.pointee.name, out)
        out.append(UInt8(ascii: ">"))
        namespaces.closeElement()
    }

    @inline(__always)
    private static func appendQualifiedName(prefix: UnsafePointer<xmlChar>?, name: UnsafePointer<xmlChar>?, _ out: CanonicalBuffer) {
        if let prefix, prefix.pointee != 0 {
            out.append(cString: prefix)
            out.append(UInt8(ascii: ":"))
        }
        if let name {
            out.append(cString: name)
        }
    }

    /// libxml2's `xmlC14NIsXmlNs`: the `xml` prefix bound to its fixed namespace.
    private static func isXMLNamespace(_ ns: UnsafeMutablePointer<xmlNs>) -> Bool {
        XMLTree.equals(ns.pointee.prefix, "xml") && XMLTree.equals(ns.pointee.href, "http://www.w3.org/XML/1998/namespace")
    }

    /// Namespace declarations in prefix order, the default (no prefix) first (`xmlC14NNsCompare`).
    /// An O(n log n) sort: the count per element is attacker-sized up to the markup limits.
    private static func sortByPrefix(_ list: inout [UnsafeMutablePointer<xmlNs>]) {
        guard list.count > 1 else { return }
        list.sort { xmlStrcmp($0.pointee.prefix, $1.pointee.prefix) < 0 }
    }

    /// Attributes in libxml2's `xmlC14NAttrsCompare` order: unqualified first by local name,
    /// then by namespace URI and local name. O(n log n), as above.
    private static func sortAttributes(_ list: inout [UnsafeMutablePointer<xmlAttr>]) {
        guard list.count > 1 else { return }
        list.sort { attributeOrder($0, $1) < 0 }
    }

    private static func attributeOrder(_ a: UnsafeMutablePointer<xmlAttr>, _ b: UnsafeMutablePointer<xmlAttr>) -> Int32 {
        if a == b { return 0 }
        let nsA = a.pointee.ns
        let nsB = b.pointee.ns
        if nsA == nsB { return xmlStrcmp(a.pointee.name, b.pointee.name) }
        guard let nsA else { return -1 }
        guard let nsB else { return 1 }
        if nsA.pointee.prefix == nil { return -1 }
        if nsB.pointee.prefix == nil { return 1 }
        let byURI = xmlStrcmp(nsA.pointee.href, nsB.pointee.href)
        return byURI != 0 ? byURI : xmlStrcmp(a.pointee.name, b.pointee.name)
    }

    /// Whether libxml2's canonicalizer surely succeeds on `doc`: it walks the whole document,
    /// not only the signed part, and fails the whole canonicalization on a relative namespace
    /// URI or an entity reference anywhere. So: every namespace declared anywhere is a plain
    /// absolute URI, and every node is an element, text, CDATA, comment or processing
    /// instruction. Declining otherwise lets libxml2 do exactly what it does.
    static func documentIsPlain(_ doc: UnsafeMutablePointer<xmlDoc>) -> Bool {
        var node: UnsafeMutablePointer<xmlNode>? = doc.pointee.children
        while let current = node {
            switch current.pointee.type {
            case XML_ELEMENT_NODE, XML_TEXT_NODE, XML_CDATA_SECTION_NODE, XML_COMMENT_NODE, XML_PI_NODE: break
            default: return false
            }
            if current.pointee.type == XML_ELEMENT_NODE {
                var declaration = current.pointee.nsDef
                while let ns = declaration {
                    if let href = ns.pointee.href, href.pointee != 0, !isPlainAbsoluteURI(href) { return false }
                    declaration = ns.pointee.next
                }
                if let child = current.pointee.children {
                    node = child
                    continue
                }
            }
            var cursor: UnsafeMutablePointer<xmlNode>? = current
            node = nil
            while let c = cursor {
                if let next = c.pointee.next {
                    node = next
                    break
                }
                cursor = c.pointee.parent
                if cursor?.pointee.type == XML_DOCUMENT_NODE { cursor = nil }
            }
        }
        return true
    }

    /// `urn:`, a letter or digit, then plain characters, or `http://` / `https://`, a host of
    /// letters, digits, dots and hyphens, then plain characters — with at most one `#`.
    /// Conservative on purpose: everything else is left to libxml2's own URI check. (After
    /// `urn:`, a `/` could start an authority, which libxml2 parses with rules of its own:
    /// `urn://http://h/x` fails its port check and with it the whole canonicalization — fuzz
    /// finding `canonicalization` #1.)
    static func isPlainAbsoluteURI(_ href: UnsafePointer<xmlChar>) -> Bool {
        var p = href
        if let rest = skip("urn:", in: p) {
            guard isLetterOrDigit(rest.pointee) else { return false }
            p = rest
        } else {
            if let rest = skip("http://", in: p) {
                p = rest
            } else if let rest = skip("https://", in: p) {
                p = rest
            } else {
                return false
            }
            let host = p
            while isHostCharacter(p.pointee) { p += 1 }
            guard p > host, p.pointee == 0 || p.pointee == UInt8(ascii: "/") else { return false }
        }
        var fragments = 0
        while p.pointee != 0 {
            let byte = p.pointee
            if byte == UInt8(ascii: "#") {
                fragments += 1
                guard fragments == 1 else { return false }
            } else if !isPlainURICharacter(byte) {
                return false
            }
            p += 1
        }
        return true
    }

    /// `string` after `prefix`, or `nil` when it does not start with it.
    private static func skip(_ prefix: StaticString, in string: UnsafePointer<xmlChar>) -> UnsafePointer<xmlChar>? {
        let length = prefix.utf8CodeUnitCount
        return xmlStrncmp(string, prefix.utf8Start, Int32(length)) == 0 ? string + length : nil
    }

    @inline(__always)
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    @inline(__always)
    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        isLetterOrDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    /// Letters, digits and `- . _ ~ : / ; = , + ! $ * ( )`.
    @inline(__always)
    private static func isPlainURICharacter(_ byte: UInt8) -> Bool {
        if isHostCharacter(byte) { return true }
        switch byte {
        case UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ","),
            UInt8(ascii: "+"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "*"), UInt8(ascii: "("), UInt8(ascii: ")"):
            return true
        default: return false
        }
    }
}

// MARK: - RenderedNamespaces

/// The namespace declarations in force in the canonical output, innermost last: what
/// exclusive C14N consults to decide whether an element must declare a prefix again.
///
/// Mirrors libxml2's "visible namespaces stack" for exclusive mode: every namespace an
/// element visibly utilizes is pushed (whether or not it was printed), and the stack is cut
/// back to its mark when the element ends. Reused per thread; holds C pointers into the
/// document being canonicalized, only for the duration of one canonicalization.
struct RenderedNamespaces {
    private var entries: [UnsafeMutablePointer<xmlNs>] = []
    private var marks: [Int] = []

    init() {
        entries.reserveCapacity(64)
        marks.reserveCapacity(64)
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        marks.removeAll(keepingCapacity: true)
    }

    /// Called when an element starts.
    mutating func openElement() {
        marks.append(entries.count)
    }

    /// Called when an element ends: forgets what it pushed.
    mutating func closeElement() {
        let mark = marks.removeLast()
        entries.removeSubrange(mark...)
    }

    mutating func push(_ ns: UnsafeMutablePointer<xmlNs>) {
        entries.append(ns)
    }

    /// Whether an output ancestor (or this element, earlier) already declared `prefix` with
    /// `href`. An empty default namespace counts as declared when nothing redeclared the
    /// default, as in libxml2's `xmlExcC14NVisibleNsStackFind`.
    func isRendered(prefix: UnsafePointer<xmlChar>?, href: UnsafePointer<xmlChar>?) -> Bool {
        var index = entries.count - 1
        while index >= 0 {
            let entry = entries[index].pointee
            if Self.sameOrBothEmpty(prefix, entry.prefix) {
                return Self.sameOrBothEmpty(href, entry.href)
            }
            index -= 1
        }
        return Self.isEmpty(prefix) && Self.isEmpty(href)
    }

    /// The same question for a prefix named in an `InclusiveNamespaces` list, which libxml2
    /// answers with its inclusive-C14N lookup: only among the declarations the output parent
    /// and this element pushed (`xmlC14NVisibleNsStackFind`), except for the empty default.
    func isRenderedByParent(prefix: UnsafePointer<xmlChar>?, href: UnsafePointer<xmlChar>?) -> Bool {
        let emptyDefault = Self.isEmpty(prefix) && Self.isEmpty(href)
        let lowest = emptyDefault || marks.count < 2 ? 0 : marks[marks.count - 2]
        var index = entries.count - 1
        while index >= lowest {
            let entry = entries[index].pointee
            if Self.sameOrBothEmpty(prefix, entry.prefix) {
                return Self.sameOrBothEmpty(href, entry.href)
            }
            index -= 1
        }
        return emptyDefault
    }

    @inline(__always)
    static func isEmpty(_ s: UnsafePointer<xmlChar>?) -> Bool {
        s == nil || s!.pointee == 0
    }

    /// String equality where NULL and "" are the same (libxml2's `xmlC14NStrEqual`).
    @inline(__always)
    static func sameOrBothEmpty(_ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?) -> Bool {
        if a == b { return true }
        if isEmpty(a) { return isEmpty(b) }
        if isEmpty(b) { return false }
        return XMLTree.equal(a!, b!)
    }
}
