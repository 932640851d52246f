import CXMLSec
import SAMLEncoding

// MARK: - SignedInfoPrecheck

/// Reads a `ds:Signature` before xmlsec does and refuses what we never verify.
///
/// - `SignedInfo` must be the first child, with an allowed `CanonicalizationMethod` and
///   `SignatureMethod` (`algorithm_not_allowed`);
/// - exactly one `Reference`, whose `URI` is `#` + the ID of the element the signature is a
///   direct child of (`reference_mismatch`: references to any other element are refused), or
///   empty — "the whole document" — when `wholeDocumentAllowed` (the signature is a direct child
///   of the document element) and the enveloped-signature transform removes the signature from
///   what it signs; an empty URI anywhere else, or a missing one, is `reference_mismatch`;
/// - only allowed `Transform`s, at most two and each once, in one `Transforms` element, and an
///   allowed `DigestMethod` (`algorithm_not_allowed`); with inclusive canonicalization not
///   allowed, the last transform must be exclusive C14N, since XML Signature applies inclusive
///   C14N 1.0 to a reference that names none (and xmlsec inserts it without consulting its
///   enabled list);
/// - an `InclusiveNamespaces` prefix list of a bounded length (`too_many_namespaces`).
/// xmlsec then enforces the same through its enabled lists; after it ran, ``SignatureVerifier``
/// checks its own view of the reference again.
enum SignedInfoPrecheck {
    /// The enveloped-signature transform and one canonicalization.
    static let maximumTransforms = 2

    /// Returns what the reference points at.
    static func check(
        signature: XMLTree.Node, ownerID: UnsafePointer<xmlChar>, wholeDocumentAllowed: Bool = false, algorithms: AlgorithmPolicy
    ) throws(VerificationError) -> ReferenceTarget {
        guard let signedInfo = XMLTree.firstChildElement(signature),
            XMLTree.isElement(signedInfo, "SignedInfo", ns: SAMLNamespace.dsigNS)
        else {
            throw VerificationError(.signatureInvalid, "Signature has no SignedInfo")
        }
        var canonicalization: XMLTree.Node?
        var signatureMethod: XMLTree.Node?
        var references: [XMLTree.Node] = []
        for child in XMLTree.childElements(signedInfo) {
            if XMLTree.isElement(child, "Reference", ns: SAMLNamespace.dsigNS) {
                references.append(child)
            } else if XMLTree.isElement(child, "CanonicalizationMethod", ns: SAMLNamespace.dsigNS), canonicalization == nil {
                canonicalization = child
            } else if XMLTree.isElement(child, "SignatureMethod", ns: SAMLNamespace.dsigNS), signatureMethod == nil {
                signatureMethod = child
            } else {
                throw VerificationError(.signatureInvalid, "unexpected element in SignedInfo")
            }
        }
        guard let canonicalization, let signatureMethod else {
            throw VerificationError(.signatureInvalid, "SignedInfo lacks CanonicalizationMethod or SignatureMethod")
        }
        try requireAllowed(canonicalization, "canonicalization", algorithms.isAllowedCanonicalization, policy: algorithms)
        try checkPrefixList(canonicalization)
        try requireAllowed(signatureMethod, "signature method", algorithms.isAllowedSignatureMethod)

        guard references.count == 1 else {
            throw VerificationError(.referenceMismatch, "SignedInfo must hold exactly one Reference, found \(references.count)")
        }
        let reference = references[0]
        // xmlsec reads attributes with `xmlGetProp`, which ignores namespaces and returns the
        // first match: a namespaced `x:URI` or `x:Algorithm` would be what xmlsec uses while
        // this check reads the plain one. Refuse any namespaced copy.
        guard !XMLTree.hasNamespacedAttribute(reference, "URI") else {
            throw VerificationError(.referenceMismatch, "the Reference has a namespaced URI attribute")
        }
        guard let uriAttr = XMLTree.attributeNode(reference, "URI") else {
            throw VerificationError(.referenceMismatch, "the Reference has no URI")
        }
        let target: ReferenceTarget
        if Self.isEmpty(uriAttr) {
            guard wholeDocumentAllowed else {
                throw VerificationError(
                    .referenceMismatch, "an empty Reference URI (the whole document) is accepted only on the Response's own signature")
            }
            target = .wholeDocument
        } else {
            guard let text = uriAttr.pointee.children, text.pointee.next == nil, let uri = text.pointee.content,
                uri.pointee == UInt8(ascii: "#"), xmlStrEqual(uri + 1, ownerID) == 1
            else {
                throw VerificationError(.referenceMismatch, "the Reference URI is not '#' + the ID of the signed element")
            }
            target = .element
        }
        var sawDigest = false
        var sawTransforms = false
        var transforms: [String] = []
        for child in XMLTree.childElements(reference) {
            if XMLTree.isElement(child, "Transforms", ns: SAMLNamespace.dsigNS) {
                // Each transform is a pass over the signed element: their number is bounded (the
                // enveloped transform and one canonicalization, each at most once), or a
                // request could repeat the pass thousands of times.
                guard !sawTransforms else {
                    throw VerificationError(.signatureInvalid, "the Reference has more than one Transforms element")
                }
                sawTransforms = true
                for transform in XMLTree.childElements(child) {
                    guard XMLTree.isElement(transform, "Transform", ns: SAMLNamespace.dsigNS) else {
                        throw VerificationError(.signatureInvalid, "unexpected element in Transforms")
                    }
                    try requireAllowed(transform, "transform", algorithms.isAllowedTransform, policy: algorithms)
                    try checkPrefixList(transform)
                    let algorithm = XMLTree.attribute(transform, "Algorithm") ?? ""
                    guard transforms.count < Self.maximumTransforms, !transforms.contains(algorithm) else {
                        throw VerificationError(
                            .algorithmNotAllowed,
                            "a Reference may apply at most \(Self.maximumTransforms) transforms, each once")
                    }
                    transforms.append(algorithm)
                }
            } else if XMLTree.isElement(child, "DigestMethod", ns: SAMLNamespace.dsigNS) {
                try requireAllowed(child, "digest method", algorithms.isAllowedDigestMethod)
                sawDigest = true
            }
        }
        guard sawDigest else {
            throw VerificationError(.signatureInvalid, "Reference has no DigestMethod")
        }
        if target == .wholeDocument && !transforms.contains(String(describing: AlgorithmPolicy.enveloped)) {
            throw VerificationError(
                .referenceMismatch, "a Reference to the whole document must apply the enveloped-signature transform")
        }
        if !algorithms.inclusiveAllowed {
            let last = transforms.last.flatMap { name in CanonicalizationMethod.allCases.first { String(describing: $0.uri) == name } }
            guard let last, last.isExclusive else {
                throw VerificationError(
                    .algorithmNotAllowed,
                    algorithms.inclusiveRefusal
                        + ", and a Reference without exclusive C14N as its last transform is canonicalized with inclusive C14N 1.0"
                )
            }
        }
        return target
    }

    /// Whether the attribute's value is the empty string (libxml2 gives `URI=""` no text child,
    /// or an empty one).
    private static func isEmpty(_ attr: UnsafeMutablePointer<xmlAttr>) -> Bool {
        guard let text = attr.pointee.children else { return true }
        return text.pointee.next == nil && text.pointee.type == XML_TEXT_NODE && (text.pointee.content?.pointee ?? 0) == 0
    }

    /// The `InclusiveNamespaces PrefixList` of a canonicalization, if any, names at most
    /// `CXMLSEC_MAX_INCLUSIVE_PREFIXES` prefixes of at most `CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH`
    /// bytes (`too_many_namespaces`). Both canonicalizers look each listed prefix up at every
    /// element they write, before the digest is compared: an unbounded list makes a forged
    /// response cost seconds. Read as the exc-c14n classes read it (the first element child,
    /// `xmlGetProp`, tokens split on XML whitespace), which enforce the same bound.
    private static func checkPrefixList(_ method: XMLTree.Node) throws(VerificationError) {
        guard let inclusive = XMLTree.firstChildElement(method), let list = xmlGetProp(inclusive, "PrefixList") else { return }
        defer { cxmlsec_xml_free(list) }
        var count = 0
        var p = UnsafePointer(list)
        while p.pointee != 0 {
            while p.pointee.isXMLWhitespace { p += 1 }
            let start = p
            while p.pointee != 0 && !p.pointee.isXMLWhitespace { p += 1 }
            guard p > start else { continue }
            count += 1
            guard count <= Int(CXMLSEC_MAX_INCLUSIVE_PREFIXES), p - start <= Int(CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH) else {
                throw VerificationError(
                    .tooManyNamespaces,
                    "an InclusiveNamespaces PrefixList may name at most \(CXMLSEC_MAX_INCLUSIVE_PREFIXES) prefixes of at most "
                        + "\(CXMLSEC_MAX_INCLUSIVE_PREFIX_LENGTH) bytes")
            }
        }
    }

    /// - Parameter policy: for a canonicalization method or transform, says why an inclusive
    ///   method is refused (``AlgorithmPolicy/inclusiveRefusal``).
    private static func requireAllowed(
        _ node: XMLTree.Node, _ what: String, _ allowed: (UnsafePointer<xmlChar>?) -> Bool, policy: AlgorithmPolicy? = nil
    ) throws(VerificationError) {
        guard !XMLTree.hasNamespacedAttribute(node, "Algorithm") else {
            throw VerificationError(.algorithmNotAllowed, "\(what) has a namespaced Algorithm attribute")
        }
        guard let raw = xmlGetNoNsProp(node, "Algorithm") else {
            throw VerificationError(.algorithmNotAllowed, "\(what) without Algorithm")
        }
        defer { cxmlsec_xml_free(raw) }
        if !allowed(UnsafePointer(raw)) {
            // The URI is an algorithm identifier, never personal data; bound its length anyway.
            let why = policy.flatMap { policy in CanonicalizationMethod(uri: UnsafePointer(raw)).map { _ in ": " + policy.inclusiveRefusal } } ?? ""
            throw VerificationError(.algorithmNotAllowed, "\(what) \(String(String(cString: raw).prefix(100))) is not allowed" + why)
        }
    }
}

// MARK: - ReferenceTarget

/// What the single `Reference` of a signature points at, as ``SignedInfoPrecheck`` read it.
enum ReferenceTarget: Equatable {
    /// `URI="#id"`: the element the signature is a direct child of.
    case element
    /// `URI=""`: the whole document, with the enveloped-signature transform removing the
    /// signature itself. Allowed only for a signature that is a direct child of the document
    /// element (the Response), which is then what it signs — the Assertion and everything else
    /// in the document included.
    case wholeDocument
}

// MARK: - InclusivePrefixList

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
        return .prefixes(bytes.split(whereSeparator: { $0.isXMLWhitespace }).map { String(decoding: $0, as: UTF8.self) })
    }
}
