import CXMLSec

/// The `InclusiveNamespaces PrefixList` of an exclusive canonicalization (its method in
/// `SignedInfo`, or a `Reference` transform), read as samlgate's exc-c14n transform classes
/// read it: the element child `InclusiveNamespaces` in the exc-c14n namespace, its `PrefixList`
/// by `xmlGetProp`, split on XML whitespace. ``SignedInfoPrecheck`` has bounded its length.
enum InclusivePrefixList {
    /// What a method element says.
    enum Reading {
        /// No element child: no prefix list.
        case none
        case prefixes([String])
        /// Another child, a second one, or no `PrefixList`: left to xmlsec.
        case unreadable
    }

    static func read(_ method: XMLTree.Node) -> Reading {
        var children = XMLTree.childElements(method).makeIterator()
        guard let inclusive = children.next() else { return .none }
        guard children.next() == nil,
            XMLTree.isElement(inclusive, "InclusiveNamespaces", ns: "http://www.w3.org/2001/10/xml-exc-c14n#"),
            let list = xmlGetProp(inclusive, "PrefixList")
        else { return .unreadable }
        defer { cxmlsec_xml_free(list) }
        // Split on the bytes, as the C classes do: splitting a `String` would split on
        // characters, and a blank followed by a combining mark is one character, not a separator.
        let bytes = UnsafeBufferPointer(start: list, count: Int(xmlStrlen(list)))
        return .prefixes(bytes.split(whereSeparator: XMLTree.isXMLSpace).map { String(decoding: $0, as: UTF8.self) })
    }
}
