// How xmlsec's canonicalization transforms reach the native canonicalizer: the hook, the node-set
// shapes it recognises, and libxml2's canonicalization of the same shapes.

import CXMLSec

// MARK: - CanonicalizationTransform

/// The native side of samlgate's exclusive C14N transform classes (C shim, `exc_c14n.c`).
///
/// Those classes replace xmlsec's own `exc-c14n` classes in its registry (same algorithm
/// URIs), so xmlsec still drives everything — reading `SignedInfo` and the references, the
/// digests and their comparison, the signature check with the preset key. Only the canonical
/// bytes may come from here: the classes offer each node set to ``hook`` and fall back to
/// exactly what xmlsec does (`xmlC14NExecute` with xmlsec's node-set callback) when it
/// declines. It declines unless the calling thread is inside a verification that asked for
/// native canonicalization (so signing, e.g. by the test IdP, always uses libxml2), the node
/// set has one of the two shapes SAML produces (``SignedSubtree``), and
/// ``ExclusiveCanonicalizer`` accepts the document and the `InclusiveNamespaces` prefix list.
enum CanonicalizationTransform {
    /// Registers ``hook`` with the C classes; called once by the library initialisation.
    static func install() {
        cxmlsec_set_native_c14n_hook(hook)
    }

    static let hook: cxmlsec_native_c14n_hook = { transform, nodes, withComments, prefixes, transformCtx in
        guard let transform, let nodes, let transformCtx,
            let thread = VerificationThreadContext.existing(), thread.nativeCanonicalization,
            let subtree = SignedSubtree(nodes),
            let bytes = thread.canonicalize(subtree, withComments: withComments != 0 && subtree.keepsComments, inclusivePrefixes: prefixes),
            let size = UInt32(exactly: bytes.count)
        else { return 0 }
        let rc: Int32
        if let next = transform.pointee.next {
            rc = xmlSecTransformPushBin(next, bytes.baseAddress, size, 1, transformCtx)
        } else {
            rc = xmlSecBufferAppend(&transform.pointee.outBuf, bytes.baseAddress, size)
        }
        return rc < 0 ? -1 : 1
    }
}

// MARK: - SignedSubtree

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

// MARK: - LibXML2Canonicalization

/// libxml2's C14N of one element subtree (optionally minus one descendant's subtree), run
/// exactly as xmlsec's own C14N transforms run it: through the node set xmlsec builds and
/// `xmlC14NExecute` with xmlsec's membership callback. The reference the native
/// ``ExclusiveCanonicalizer`` is compared with (``CanonicalizationDifferential``, the tests),
/// and what ``SignatureKeySelection`` canonicalizes `SignedInfo` with when the native
/// canonicalizer declines the document or `SignedInfo` names inclusive C14N.
enum LibXML2Canonicalization {
    /// What libxml2 makes of one shape.
    enum Result {
        /// The node set xmlsec builds for the shape is not one ``SignedSubtree`` recognises, so
        /// the native canonicalizer would never be asked for it.
        case shapeNotRecognised
        case failed
        case canonical([UInt8])
    }

    /// libxml2's exclusive canonicalization of `apex` without `excluded`, through the node set
    /// xmlsec's transforms build (see ``SignedSubtree``).
    static func canonicalize(
        _ doc: UnsafeMutablePointer<xmlDoc>, apex: XMLTree.Node, excluded: XMLTree.Node?, withComments: Bool,
        prefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> Result {
        canonicalize(doc, apex: apex, excluded: excluded, method: withComments ? .exclusiveWithComments : .exclusive, prefixes: prefixes)
    }

    /// libxml2's canonicalization of `apex` without `excluded` by `method` (`prefixes` only
    /// for an exclusive one), through the node set xmlsec's transforms build.
    static func canonicalize(
        _ doc: UnsafeMutablePointer<xmlDoc>, apex: XMLTree.Node, excluded: XMLTree.Node?, method: CanonicalizationMethod,
        prefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> Result {
        let withComments = method.withComments
        guard var set = xmlSecNodeSetGetChildren(doc, apex, withComments ? 1 : 0, 0) else { return .failed }
        if let excluded, let invert = xmlSecNodeSetGetChildren(doc, excluded, 1, 1) {
            set = xmlSecNodeSetAdd(set, invert, xmlSecNodeSetIntersection)
        }
        defer { xmlSecNodeSetDestroy(set) }
        guard let recognised = SignedSubtree(set), recognised.apex == apex, recognised.excluded == excluded,
            recognised.keepsComments == withComments
        else { return .shapeNotRecognised }
        guard let buffer = xmlBufferCreate() else { return .failed }
        defer { xmlBufferFree(buffer) }
        guard cxmlsec_c14n_to_buffer(set, method.libxml2Mode, method.isExclusive ? prefixes : nil, withComments ? 1 : 0, buffer) == 0
        else { return .failed }
        let count = Int(xmlBufferLength(buffer))
        guard count > 0, let content = xmlBufferContent(buffer) else { return .canonical([]) }
        return .canonical(Array(UnsafeBufferPointer(start: content, count: count)))
    }

    /// `list` as the NULL-terminated `xmlChar` array xmlsec takes, for the duration of `body`.
    static func withPrefixList<T>(_ list: [String]?, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?) -> T) -> T {
        guard let list else { return body(nil) }
        let array = UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>.allocate(capacity: list.count + 1)
        for (index, prefix) in list.enumerated() {
            array[index] = xmlCharStrdup(prefix)
        }
        array[list.count] = nil
        defer {
            for index in 0..<list.count { cxmlsec_xml_free(array[index]) }
            array.deallocate()
        }
        return body(array)
    }

}
