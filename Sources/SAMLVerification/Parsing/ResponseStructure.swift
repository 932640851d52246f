import CXMLSec

/// The located parts of a SAML response, after the structural defences against signature
/// wrapping have passed.
///
/// Built by one walk over every element of the document, which
/// - enforces the depth limit,
/// - registers every un-namespaced `ID` attribute with `xmlAddID` itself (no DTD decides what
///   an ID is) and rejects a second element claiming an ID already taken (`duplicate_id`;
///   `xml:id` attributes, which libxml2 registers while parsing, count too),
/// - refuses entity reference nodes, counts `saml:Assertion` and `saml:EncryptedAssertion`
///   elements anywhere in the document.
/// Then it requires: the root is `samlp:Response` with an ID; no encrypted assertion; exactly
/// one Assertion in the whole document and it is a direct child of the Response; at most one
/// `ds:Signature` as a direct child of each. Signatures anywhere else are never used.
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

        // Depth-first walk over elements. Invariant: `depth` is the element depth of `node`
        // (root = 1) and every element before `node` in document order has been visited.
        var node = root
        var depth = 1
        walk: while true {
            if depth > maxDepth {
                throw VerificationError(.tooDeep, "elements nest deeper than \(maxDepth) levels")
            }
            let idValue = try IDAttribute.register(node, in: doc)
            if let ns = node.pointee.ns, XMLTree.equals(ns.pointee.href, SAMLNamespace.assertionNS) {
                if XMLTree.equals(node.pointee.name, "Assertion") {
                    assertions.append((node, idValue))
                } else if XMLTree.equals(node.pointee.name, "EncryptedAssertion") {
                    encrypted += 1
                }
            }
            if node == root { responseID = idValue }

            if let child = try IDAttribute.nextElement(from: node.pointee.children) {
                node = child
                depth += 1
                continue walk
            }
            while true {
                if node == root { break walk }
                if let sibling = try IDAttribute.nextElement(from: node.pointee.next) {
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
        guard assertions.count == 1 else {
            throw VerificationError(.assertionCount, "expected exactly one Assertion, found \(assertions.count)")
        }
        let assertion = assertions[0].node
        guard assertion.pointee.parent == root else {
            throw VerificationError(.assertionCount, "the Assertion is not a direct child of the Response")
        }
        guard let assertionID = assertions[0].id else {
            throw VerificationError(.malformedXML, "the Assertion has no ID")
        }
        self.response = root
        self.responseID = responseID
        self.assertion = assertion
        self.assertionID = assertionID
        self.responseSignature = try Self.signature(of: root)
        self.assertionSignature = try Self.signature(of: assertion)
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
