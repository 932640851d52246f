import CXMLSec

// MARK: - ResponseStructure

/// The located parts of a SAML response, after the structural defences against signature
/// wrapping have passed.
///
/// Built by one walk over every element of the document, which
/// - enforces the depth limit,
/// - registers every un-namespaced `ID` attribute with `xmlAddID` itself (no DTD decides what
///   an ID is) and rejects a second element claiming an ID already taken (`duplicate_id`;
///   `xml:id` attributes, which libxml2 registers while parsing, count too),
/// - refuses entity reference nodes, processing instructions and XInclude elements anywhere
///   (`forbidden_markup`: no response needs them, and a backend's XML stack may act on them),
/// - collects `saml:Assertion` and counts `saml:EncryptedAssertion` elements anywhere in the document.
/// Then it requires: the root is `samlp:Response` with an ID; no encrypted assertion; exactly
/// one Assertion as a direct child of the Response, and no other Assertion anywhere but inside
/// that Assertion's `Advice` (SAML Core §2.6; never read, covered by the outer Assertion's
/// signature); at most one `ds:Signature` as a direct child of each. Signatures anywhere else
/// are never used.
/// Finally what no signature covers may not carry identity (`unsigned_content`, see
/// ``checkUnsignedContent()``).
struct ResponseStructure {
    typealias Node = XMLTree.Node

    let response: Node
    /// The Response's ID value, owned by the document.
    let responseID: UnsafePointer<xmlChar>
    let assertion: Node
    let assertionID: UnsafePointer<xmlChar>
    let responseSignature: Node?
    let assertionSignature: Node?

    init(document: borrowing ParsedDocument, maxDepth: Int) throws(VerificationError) {
        let doc = document.doc
        guard let root = document.root else {
            throw VerificationError(.malformedXML, "no root element")
        }
        var assertions: [(node: Node, id: UnsafePointer<xmlChar>?)] = []
        var encrypted = 0
        var responseID: UnsafePointer<xmlChar>?

        // Processing instructions before and after the root element.
        var topLevel = doc.pointee.children
        while let current = topLevel {
            if current.pointee.type == XML_PI_NODE {
                throw VerificationError(.forbiddenMarkup, "processing instructions are not accepted")
            }
            topLevel = current.pointee.next
        }
        // Depth-first walk over elements. Invariant: `depth` is the element depth of `node`
        // (root = 1) and every element before `node` in document order has been visited.
        var node = root
        var depth = 1
        walk: while true {
            if depth > maxDepth {
                throw VerificationError(.tooDeep, "elements nest deeper than \(maxDepth) levels")
            }
            let idValue = try IDAttribute.register(node, in: doc)
            if let ns = node.pointee.ns {
                if XMLTree.equals(ns.pointee.href, SAMLNamespace.assertionNS) {
                    if XMLTree.equals(node.pointee.name, "Assertion") {
                        assertions.append((node, idValue))
                    } else if XMLTree.equals(node.pointee.name, "EncryptedAssertion") {
                        encrypted += 1
                    }
                } else if SAMLNamespace.isXInclude(ns.pointee.href) {
                    throw VerificationError(.forbiddenMarkup, "XInclude elements are not accepted")
                }
            }
            if node == root { responseID = idValue }

            if let child = try IDAttribute.nextElement(from: node.pointee.children, refusingProcessingInstructions: true) {
                node = child
                depth += 1
                continue walk
            }
            while true {
                if node == root { break walk }
                if let sibling = try IDAttribute.nextElement(from: node.pointee.next, refusingProcessingInstructions: true) {
                    node = sibling
                    continue walk
                }
                guard let parent = node.pointee.parent else { break walk }
                node = parent
                depth -= 1
            }
        }

        guard XMLTree.isElement(root, "Response", ns: SAMLNamespace.protocolNS) else {
            throw VerificationError(.malformedXML, "the root element is not samlp:Response")
        }
        guard let responseID else {
            throw VerificationError(.malformedXML, "the Response has no ID")
        }
        if encrypted > 0 {
            throw VerificationError(.unsupportedEncryptedAssertion, "encrypted assertions are not supported")
        }
        // The Response's own assertions are its children; SAML Core §2.6 lets an assertion's
        // `Advice` carry others (PEFIM sends them), which nothing here reads and the outer
        // assertion's signature covers. Any other placement is a wrapping attempt.
        let own = assertions.filter { $0.node.pointee.parent == root }
        guard own.count == 1 else {
            throw VerificationError(
                .assertionCount,
                own.isEmpty && !assertions.isEmpty
                    ? "the Assertion is not a direct child of the Response" : "expected exactly one Assertion, found \(own.count)")
        }
        let assertion = own[0].node
        if assertions.contains(where: { $0.node != assertion && !Self.isInAdvice($0.node, of: assertion) }) {
            throw VerificationError(.assertionCount, "an Assertion outside the Response's own, which only that Assertion's Advice may hold")
        }
        guard let assertionID = own[0].id else {
            throw VerificationError(.malformedXML, "the Assertion has no ID")
        }
        self.response = root
        self.responseID = responseID
        self.assertion = assertion
        self.assertionID = assertionID
        self.responseSignature = try Self.signature(of: root)
        self.assertionSignature = try Self.signature(of: assertion)
        try checkUnsignedContent()
    }

    /// Whether `node` lies inside the `saml:Advice` child of `assertion` (at any depth: an
    /// advice's assertion may carry advice of its own). A walk up the parents, bounded by the
    /// depth limit.
    static func isInAdvice(_ node: Node, of assertion: Node) -> Bool {
        var current = node
        while let parent = current.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE {
            if parent == assertion { return XMLTree.isElement(current, "Advice", ns: SAMLNamespace.assertionNS) }
            current = parent
        }
        return false
    }

    /// What no digest covers may not hold what a backend could read as identity:
    /// - inside either `ds:Signature` (the enveloped transform removes it from what it signs),
    ///   no element of the SAML assertion or protocol namespace;
    /// - when only the Assertion is signed, the Response's children are what the protocol
    ///   schema allows, in its order (`Issuer`?, `Extensions`?, `Status`, the Assertion; the
    ///   Response's own `Signature` cannot be there), with no text between them, and no SAML
    ///   assertion element inside `Issuer`, `Extensions` or `Status`;
    /// - in both places, no element of any namespace named like an identity-carrying SAML element
    ///   (`NameID`, `Subject`, `Attribute` …), for backends that match local names only.
    /// A naive backend reads the first `NameID` in document order: one placed in the unsigned
    /// envelope or in `KeyInfo` would come before the signed one. A second walk, over the two
    /// signatures and the envelope's other children only (each of those subtrees once).
    private func checkUnsignedContent() throws(VerificationError) {
        for signature in [responseSignature, assertionSignature] {
            guard let signature else { continue }
            if Self.containsElement(below: signature, where: { SAMLNamespace.isSAML($0.pointee.ns?.pointee.href) || Self.isIdentityName($0) }) {
                throw VerificationError(.unsignedContent, "a ds:Signature holds a SAML element, which no digest covers")
            }
        }
        guard responseSignature == nil else { return }
        let samlp = SAMLNamespace.protocolNS
        // The schema's order: Issuer (0), Extensions (1), Status (2), each at most once.
        var position = -1
        var child = response.pointee.children
        while let current = child {
            child = current.pointee.next
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                if current == assertion {
                    position = 3
                    continue
                }
                let place: Int
                if XMLTree.isElement(current, "Issuer", ns: SAMLNamespace.assertionNS) {
                    place = 0
                } else if XMLTree.isElement(current, "Extensions", ns: samlp) {
                    place = 1
                } else if XMLTree.isElement(current, "Status", ns: samlp) {
                    place = 2
                } else {
                    place = -1
                }
                guard place > position else {
                    throw VerificationError(
                        .unsignedContent, "the unsigned Response holds an element the protocol schema does not allow there")
                }
                position = place
                if Self.containsElement(
                    below: current, where: { XMLTree.equals($0.pointee.ns?.pointee.href, SAMLNamespace.assertionNS) || Self.isIdentityName($0) })
                {
                    throw VerificationError(.unsignedContent, "the unsigned Response holds a SAML assertion element outside the Assertion")
                }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                guard XMLTree.isXMLWhitespace(current.pointee.content) else {
                    throw VerificationError(.unsignedContent, "the unsigned Response holds text between its elements")
                }
            default:
                break
            }
        }
    }

    /// Local names of the SAML elements that carry or bound an identity (SAML 2.0, and 1.1's
    /// `NameIdentifier`), whatever their namespace.
    private static func isIdentityName(_ element: Node) -> Bool {
        let name = element.pointee.name
        return XMLTree.equals(name, "NameID") || XMLTree.equals(name, "Subject") || XMLTree.equals(name, "Assertion")
            || XMLTree.equals(name, "Attribute") || XMLTree.equals(name, "AttributeValue") || XMLTree.equals(name, "EncryptedID")
            || XMLTree.equals(name, "BaseID") || XMLTree.equals(name, "NameIdentifier") || XMLTree.equals(name, "Issuer")
            || XMLTree.equals(name, "Audience")
    }

    /// Whether an element strictly below `top` matches `match`.
    private static func containsElement(below top: Node, where match: (Node) -> Bool) -> Bool {
        var node = top.pointee.children
        while let current = node {
            if current.pointee.type == XML_ELEMENT_NODE {
                if match(current) { return true }
                if let child = current.pointee.children {
                    node = child
                    continue
                }
            }
            // The next node in document order within `top`.
            var cursor = current
            node = nil
            while cursor != top {
                if let next = cursor.pointee.next {
                    node = next
                    break
                }
                guard let parent = cursor.pointee.parent else { break }
                cursor = parent
            }
        }
        return false
    }

    /// The `ds:Signature` that is a direct child of `element`; several are refused.
    static func signature(of element: Node) throws(VerificationError) -> Node? {
        var found: Node?
        for child in XMLTree.childElements(element) where XMLTree.isElement(child, "Signature", ns: SAMLNamespace.dsigNS) {
            if found != nil {
                throw VerificationError(.signatureInvalid, "more than one Signature on the same element")
            }
            found = child
        }
        return found
    }

    /// ID of the element a signature belongs to.
    func id(of element: Node) -> UnsafePointer<xmlChar> {
        element == response ? responseID : assertionID
    }
}

// MARK: - IDAttribute

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
