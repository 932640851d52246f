import CXMLSec

/// The node set xmlsec hands a canonicalization transform, recognised by shape as "this
/// element's subtree, minus that descendant's subtree" — the only two shapes a SAML
/// signature produces:
/// - `SignedInfo`: one `Tree` set (comments kept) of the `SignedInfo` element;
/// - `Reference URI="#id"` + enveloped-signature transform: the whole document (a `Normal`
///   set without a node list), intersected with a `TreeWithoutComments` set of the element
///   with that ID, intersected with a `TreeInvert` set of the `ds:Signature`.
///
/// The recognised members of the ring are exactly those whose meaning `xmlSecNodeSetContains`
/// gives without looking further: all-nodes, one element's subtree, everything but one
/// element's subtree, combined by intersection. Any other shape (XPath results, unions,
/// several nodes, non-elements) is not recognised and the set goes to libxml2 with xmlsec's
/// generic membership callback.
struct SignedSubtree {
    let apex: XMLTree.Node
    let excluded: XMLTree.Node?
    /// Comments are in the set (no member is a "without comments" set).
    let keepsComments: Bool

    /// Rings longer than this are not a SAML shape.
    private static let maxMembers = 8

    /// A same-document reference's node set, as ``NativeSignature`` knows it without xmlsec:
    /// `apex`'s subtree without `excluded`'s (its enveloped signature), comments dropped.
    init(apex: XMLTree.Node, excluded: XMLTree.Node) {
        self.apex = apex
        self.excluded = excluded
        keepsComments = false
    }

    init?(_ nodes: UnsafeMutablePointer<xmlSecNodeSet>) {
        var apex: XMLTree.Node?
        var excluded: XMLTree.Node?
        var keepsComments = true
        var member = nodes
        var seen = 0
        repeat {
            let set = member.pointee
            seen += 1
            guard seen <= Self.maxMembers, set.op == xmlSecNodeSetIntersection, set.children == nil,
                set.doc == nodes.pointee.doc
            else { return nil }
            switch set.type {
            case xmlSecNodeSetNormal where set.nodes == nil:
                break  // all nodes
            case xmlSecNodeSetTree, xmlSecNodeSetTreeWithoutComments:
                guard apex == nil, let element = Self.singleElement(set.nodes) else { return nil }
                apex = element
                keepsComments = keepsComments && set.type == xmlSecNodeSetTree
            case xmlSecNodeSetTreeInvert, xmlSecNodeSetTreeWithoutCommentsInvert:
                guard excluded == nil, let element = Self.singleElement(set.nodes) else { return nil }
                excluded = element
                keepsComments = keepsComments && set.type == xmlSecNodeSetTreeInvert
            default:
                return nil
            }
            guard let next = set.next else { return nil }
            member = next
        } while member != nodes
        guard let apex, apex.pointee.doc == nodes.pointee.doc else { return nil }
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
            node.pointee.type == XML_ELEMENT_NODE
        else { return nil }
        return node
    }
}
