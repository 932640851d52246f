import CXMLSec

/// The node set xmlsec hands a canonicalization transform, recognised by shape as "this
/// element's subtree, minus that descendant's subtree" — the only two shapes a SAML
/// signature produces:
/// - `SignedInfo`: one `Tree` set (comments kept) of the `SignedInfo` element;
/// - `Reference URI="#id"` + enveloped-signature transform: a `TreeWithoutComments` set of
///   the element with that ID, intersected with a `TreeInvert` set of the `ds:Signature`.
///
/// Any other shape (XPath results, unions, several nodes, non-elements) is not recognised and
/// the set goes to libxml2 with xmlsec's generic membership callback.
struct SignedSubtree {
    let apex: XMLTree.Node
    let excluded: XMLTree.Node?
    /// Comments are in the set (a `Tree` set, and a `TreeInvert` exclusion if any).
    let keepsComments: Bool

    init?(_ nodes: UnsafeMutablePointer<xmlSecNodeSet>) {
        let head = nodes.pointee
        guard head.op == xmlSecNodeSetIntersection, head.children == nil,
            head.type == xmlSecNodeSetTree || head.type == xmlSecNodeSetTreeWithoutComments,
            let apex = Self.singleElement(head.nodes) else { return nil }
        var keepsComments = head.type == xmlSecNodeSetTree
        var excluded: XMLTree.Node?
        if let next = head.next, next != nodes {
            let second = next.pointee
            guard second.next == nodes, second.op == xmlSecNodeSetIntersection, second.children == nil,
                second.doc == head.doc,
                second.type == xmlSecNodeSetTreeInvert || second.type == xmlSecNodeSetTreeWithoutCommentsInvert,
                let signature = Self.singleElement(second.nodes) else { return nil }
            excluded = signature
            keepsComments = keepsComments && second.type == xmlSecNodeSetTreeInvert
        }
        guard apex.pointee.doc == head.doc else { return nil }
        // A signature around the referenced element (a reference into `ds:Object`) removes
        // it all: not this shape.
        var ancestor: XMLTree.Node? = apex
        while let current = ancestor, excluded != nil {
            if current == excluded { return nil }
            ancestor = current.pointee.parent
        }
        self.apex = apex
        self.excluded = excluded
        self.keepsComments = keepsComments
    }

    private static func singleElement(_ set: UnsafeMutablePointer<xmlNodeSet>?) -> XMLTree.Node? {
        guard let set, set.pointee.nodeNr == 1, let table = set.pointee.nodeTab, let node = table[0],
            node.pointee.type == XML_ELEMENT_NODE else { return nil }
        return node
    }
}
