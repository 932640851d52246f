import CXMLSec

/// Checks the enveloped signature of a metadata document against pinned signer keys, with the
/// verifier's own machinery and defences: every `ID` registered by us with duplicates refused,
/// exactly one `ds:Signature` as a direct child of the root, whose single reference is `#` +
/// the root's ID and resolves to the root itself, the algorithm allow-list (no SHA-1), the
/// `SignedInfo` precheck, and only the pinned keys — `KeyInfo` is never read.
///
/// The signature covers the root, so every entity, role and certificate read afterwards
/// (direct children only) is signed content.
enum MetadataSignature {
    static func verify(
        _ document: borrowing ParsedDocument, root: XMLTree.Node, signers: [TrustedKey],
        context: VerificationThreadContext
    ) throws(VerificationError) {
        var rootID: UnsafePointer<xmlChar>?
        try register(root, document.doc, depth: 1, rootID: &rootID)
        guard let rootID else {
            throw VerificationError(.signatureMissing, "the signed metadata's root has no ID to reference")
        }
        guard let signature = try ResponseStructure.signature(of: root) else {
            throw VerificationError(.signatureMissing, "the metadata is not signed (no ds:Signature on its root)")
        }
        let options = VerificationOptions()
        _ = try SignatureVerifier.verify(
            signature: signature, owner: root, ownerID: rootID, document: document, keys: signers,
            algorithms: AlgorithmPolicy(allowSHA1: false, nativeCanonicalization: options.nativeCanonicalization), context: context)
    }

    /// Registers the IDs of `node` and every element below it. Depth is bounded by the parse
    /// (``MetadataReader/maxDepth``), so the recursion is too.
    private static func register(
        _ node: XMLTree.Node, _ doc: UnsafeMutablePointer<xmlDoc>, depth: Int,
        rootID: inout UnsafePointer<xmlChar>?
    ) throws(VerificationError) {
        let id = try IDAttribute.register(node, in: doc)
        if depth == 1 { rootID = id }
        var child = try IDAttribute.nextElement(from: node.pointee.children)
        while let current = child {
            try register(current, doc, depth: depth + 1, rootID: &rootID)
            child = try IDAttribute.nextElement(from: current.pointee.next)
        }
    }
}
