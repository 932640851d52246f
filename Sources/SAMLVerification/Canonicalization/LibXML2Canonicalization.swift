import CXMLSec

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
