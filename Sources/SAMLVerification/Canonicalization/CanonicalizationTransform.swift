import CXMLSec

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
