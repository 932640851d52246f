import CXMLSec

/// The native ``ExclusiveCanonicalizer`` against libxml2's exclusive C14N on one node set, for
/// the `canonicalization` fuzz target (`Fuzz/`, docs/robustness.md). Not used by the verifier
/// (which shares only ``LibXML2Canonicalization`` with it).
///
/// **Why it is here.** The fuzz package sees only this module's public API, and the two
/// canonicalizers work on libxml2 trees and xmlsec node sets that must stay internal. This
/// type keeps all of that inside the module: it parses a document with the verifier's parser
/// options, builds the node set exactly as xmlsec builds it for a SAML signature (the apex's
/// subtree, optionally minus one descendant's subtree), runs both canonicalizers and reports
/// the outcome. It changes nothing the verifier does.
@_spi(Fuzzing) public struct CanonicalizationDifferential {
    /// One node-set shape over the elements of a document, in document order.
    public struct Shape: Sendable {
        /// The apex: element number `apex % elementCount`.
        public var apex: Int
        /// `nil`: nothing excluded; otherwise the apex's child element number `excluded % childCount`
        /// (nothing excluded when the apex has no child elements).
        public var excluded: Int?
        public var withComments: Bool
        /// The `InclusiveNamespaces` prefix list, or nil.
        public var prefixes: [String]?

        public init(apex: Int, excluded: Int?, withComments: Bool, prefixes: [String]?) {
            self.apex = apex
            self.excluded = excluded
            self.withComments = withComments
            self.prefixes = prefixes
        }
    }

    /// What one comparison found.
    public enum Outcome: Equatable, Sendable {
        /// The document does not parse (or has no element).
        case notParsed
        /// The native canonicalizer declined; libxml2 would be used.
        case declined
        /// Both produced these bytes' count, byte for byte the same.
        case identical(count: Int)
        /// The native canonicalizer produced output where libxml2 fails.
        case libxml2Failed
        /// Different bytes: the counterexample the fuzz target looks for (lengths only).
        case differs(native: Int, libxml2: Int)
        /// xmlsec's node set was not recognised by ``SignedSubtree`` as the shape it was built from.
        case shapeNotRecognised
        /// The same bytes, but hashed while they were written (the verifier's way: the buffer a
        /// small window flushed to the digest) they give another SHA-256 than libxml2's output.
        case digestDiffers
    }

    private var canonicalizer = ExclusiveCanonicalizer()
    private let native = CanonicalBuffer(capacity: 1024)
    /// A window far smaller than the verifier's, so that every shape of flush is exercised: in
    /// the middle of a name, an escape, or before a write longer than the window.
    private let streamed = CanonicalBuffer(capacity: 61)
    private let digest: DigestContext
    private let parseOptions = SecureXMLParser.options

    public init() {
        _ = cxmlsec_init()
        guard let digest = DigestContext() else { fatalError("OpenSSL cannot allocate a digest context") }
        self.digest = digest
    }

    /// The namespace prefixes declared anywhere in `document` (at most `limit`), so callers can
    /// build prefix lists that name prefixes the document really uses.
    public func declaredPrefixes(_ document: UnsafeRawBufferPointer, limit: Int = 16) -> [String] {
        VerificationArena.withWindow { prefixes(document, limit: limit) }
    }

    private func prefixes(_ document: UnsafeRawBufferPointer, limit: Int) -> [String] {
        guard let doc = parse(document) else { return [] }
        defer { xmlFreeDoc(doc) }
        var found: [String] = []
        for element in Self.elements(doc) {
            var ns = element.pointee.nsDef
            while let declaration = ns, found.count < limit {
                if let prefix = declaration.pointee.prefix {
                    let text = String(cString: prefix)
                    if !found.contains(text) { found.append(text) }
                }
                ns = declaration.pointee.next
            }
        }
        return found
    }

    /// Parses `document` and compares the two canonicalizers on each of `shapes`, in an arena
    /// window as the verifier parses and canonicalizes (``VerificationArena``).
    public mutating func compare(_ document: UnsafeRawBufferPointer, shapes: [Shape]) -> [Outcome] {
        VerificationArena.withWindow { compareParsed(document, shapes: shapes) }
    }

    private mutating func compareParsed(_ document: UnsafeRawBufferPointer, shapes: [Shape]) -> [Outcome] {
        guard let doc = parse(document) else { return [.notParsed] }
        defer { xmlFreeDoc(doc) }
        let elements = Self.elements(doc)
        guard !elements.isEmpty else { return [.notParsed] }
        return shapes.map { shape in
            let apex = elements[shape.apex % elements.count]
            var excluded: XMLTree.Node?
            if let pick = shape.excluded {
                let children = Array(XMLTree.childElements(apex))
                if !children.isEmpty { excluded = children[pick % children.count] }
            }
            return LibXML2Canonicalization.withPrefixList(shape.prefixes) { list in
                compare(doc, apex: apex, excluded: excluded, withComments: shape.withComments, prefixes: list)
            }
        }
    }

    private func parse(_ document: UnsafeRawBufferPointer) -> UnsafeMutablePointer<xmlDoc>? {
        guard let base = document.baseAddress, document.count > 0, document.count <= Int(Int32.max) else { return nil }
        return xmlReadMemory(base.assumingMemoryBound(to: CChar.self), Int32(document.count), nil, "UTF-8", parseOptions)
    }

    private mutating func compare(
        _ doc: UnsafeMutablePointer<xmlDoc>, apex: XMLTree.Node, excluded: XMLTree.Node?, withComments: Bool,
        prefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> Outcome {
        native.reset()
        let handled = canonicalizer.canonicalize(
            apex: apex, excluding: excluded, withComments: withComments,
            inclusivePrefixes: prefixes, into: native)
        switch LibXML2Canonicalization.canonicalize(doc, apex: apex, excluded: excluded, withComments: withComments, prefixes: prefixes) {
        case .shapeNotRecognised: return .shapeNotRecognised
        case _ where !handled: return .declined
        case .failed: return .libxml2Failed
        case .canonical(let reference):
            guard native.bytes.elementsEqual(reference) else { return .differs(native: native.count, libxml2: reference.count) }
            guard
                let streamedDigest = streamedSHA256(apex: apex, excluded: excluded, withComments: withComments, prefixes: prefixes),
                streamedDigest == sha256(reference)
            else { return .digestDiffers }
            return .identical(count: reference.count)
        }
    }

    /// The SHA-256 of the native canonical form, hashed while it is written.
    private mutating func streamedSHA256(
        apex: XMLTree.Node, excluded: XMLTree.Node?, withComments: Bool, prefixes: UnsafeMutablePointer<UnsafeMutablePointer<xmlChar>?>?
    ) -> [UInt8]? {
        guard digest.begin(CXMLSEC_DIGEST_SHA256) else { return nil }
        streamed.beginDigest(digest)
        let written = canonicalizer.canonicalize(
            apex: apex, excluding: excluded, withComments: withComments, inclusivePrefixes: prefixes, into: streamed)
        guard streamed.finishDigest(), written else { return nil }
        return digest.finish()
    }

    private func sha256(_ bytes: [UInt8]) -> [UInt8]? {
        guard digest.begin(CXMLSEC_DIGEST_SHA256), bytes.withUnsafeBufferPointer({ digest.update($0) }) else { return nil }
        return digest.finish()
    }

    /// Every element of `doc`, in document order.
    static func elements(_ doc: UnsafeMutablePointer<xmlDoc>) -> [XMLTree.Node] {
        var result: [XMLTree.Node] = []
        var stack: [XMLTree.Node] = []
        if let root = xmlDocGetRootElement(doc) { stack.append(root) }
        while let node = stack.popLast() {
            result.append(node)
            stack.append(contentsOf: XMLTree.childElements(node).reversed())
        }
        return result
    }
}
