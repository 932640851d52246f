import CXMLSec

/// The parts of one `ds:Signature` ``NativeSignature`` reads, when the signature has exactly
/// the shape SAML identity providers produce (see there); `nil` for any other shape.
struct NativeSignatureShape {
    let signedInfo: XMLTree.Node
    let signedInfoMethod: CanonicalizationMethod
    let signedInfoPrefixes: [String]?
    let signatureMethod: NativeSignatureMethod
    let signatureValue: XMLTree.Node
    let digestMethod: cxmlsec_digest
    let digestValue: XMLTree.Node
    /// The exclusive C14N transform's prefix list.
    let referencePrefixes: [String]?

    private static let ds: StaticString = SAMLNamespace.dsigNS

    init?(signature: XMLTree.Node) {
        var children = XMLTree.childElements(signature).makeIterator()
        guard let signedInfo = children.next(), XMLTree.isElement(signedInfo, "SignedInfo", ns: Self.ds),
            let signatureValue = children.next(), XMLTree.isElement(signatureValue, "SignatureValue", ns: Self.ds)
        else { return nil }
        // Then xmlsec's grammar: at most one KeyInfo, then Objects only.
        var next = children.next()
        if let keyInfo = next, XMLTree.isElement(keyInfo, "KeyInfo", ns: Self.ds) { next = children.next() }
        while let object = next {
            guard XMLTree.isElement(object, "Object", ns: Self.ds) else { return nil }
            next = children.next()
        }
        var parts = XMLTree.childElements(signedInfo).makeIterator()
        guard let c14n = parts.next(), XMLTree.isElement(c14n, "CanonicalizationMethod", ns: Self.ds),
            let method = parts.next(), XMLTree.isElement(method, "SignatureMethod", ns: Self.ds),
            XMLTree.firstChildElement(method) == nil,
            let reference = parts.next(), XMLTree.isElement(reference, "Reference", ns: Self.ds),
            parts.next() == nil,
            let signedInfoMethod = Self.algorithm(c14n, CanonicalizationMethod.init(uri:)), signedInfoMethod.isExclusive,
            case .some(let signedInfoPrefixes) = Self.prefixes(c14n),
            let signatureMethod = Self.algorithm(method, NativeSignatureMethod.init(uri:))
        else { return nil }
        var steps = XMLTree.childElements(reference).makeIterator()
        guard let transforms = steps.next(), XMLTree.isElement(transforms, "Transforms", ns: Self.ds),
            let digestMethodNode = steps.next(), XMLTree.isElement(digestMethodNode, "DigestMethod", ns: Self.ds),
            XMLTree.firstChildElement(digestMethodNode) == nil,
            let digestValue = steps.next(), XMLTree.isElement(digestValue, "DigestValue", ns: Self.ds),
            steps.next() == nil,
            let digestMethod = Self.algorithm(digestMethodNode, NativeSignatureMethod.digest(uri:))
        else { return nil }
        var transformList = XMLTree.childElements(transforms).makeIterator()
        guard let enveloped = transformList.next(), XMLTree.isElement(enveloped, "Transform", ns: Self.ds),
            XMLTree.firstChildElement(enveloped) == nil,
            Self.algorithm(enveloped, { XMLTree.equals($0, AlgorithmPolicy.enveloped) ? true : nil }) == true,
            let exclusive = transformList.next(), XMLTree.isElement(exclusive, "Transform", ns: Self.ds),
            transformList.next() == nil,
            Self.algorithm(exclusive, CanonicalizationMethod.init(uri:))?.isExclusive == true,
            case .some(let referencePrefixes) = Self.prefixes(exclusive)
        else { return nil }
        self.signedInfo = signedInfo
        self.signedInfoMethod = signedInfoMethod
        self.signedInfoPrefixes = signedInfoPrefixes
        self.signatureMethod = signatureMethod
        self.signatureValue = signatureValue
        self.digestMethod = digestMethod
        self.digestValue = digestValue
        self.referencePrefixes = referencePrefixes
    }

    /// Whether the `Reference`'s `#id` (which ``SignedInfoPrecheck`` matched to `ownerID`)
    /// resolves, as xmlsec resolves it, to `owner` itself.
    func referencesOwner(_ owner: XMLTree.Node, ownerID: UnsafePointer<xmlChar>, doc: UnsafeMutablePointer<xmlDoc>) -> Bool {
        guard let attribute = xmlGetID(doc, ownerID) else { return false }
        return attribute.pointee.parent == owner
    }

    /// What the `Algorithm` attribute (without a namespace, as xmlsec reads it) names.
    private static func algorithm<T>(_ node: XMLTree.Node, _ read: (UnsafePointer<xmlChar>?) -> T?) -> T? {
        guard let raw = xmlGetNoNsProp(node, "Algorithm") else { return nil }
        defer { cxmlsec_xml_free(raw) }
        return read(UnsafePointer(raw))
    }

    /// `.some(nil)`: no prefix list; `.some(list)`; `nil`: unreadable (not this shape).
    private static func prefixes(_ method: XMLTree.Node) -> [String]?? {
        switch InclusivePrefixList.read(method) {
        case .none: .some(nil)
        case .prefixes(let list): .some(list)
        case .unreadable: nil
        }
    }
}
