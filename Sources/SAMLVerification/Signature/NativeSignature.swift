import CXMLSec
import SAMLEncoding

// MARK: - NativeSignature

/// Verifies the signature SAML identity providers make — exclusive C14N, one `Reference` to the
/// signed element with the enveloped-signature and exclusive C14N transforms, RSA or ECDSA
/// over SHA-1/256/384/512 — without xmlsec's transform chain, and **declines** everything else
/// (``SignatureVerifier`` then lets xmlsec decide).
///
/// **Why.** xmlsec builds a transform chain, an XPointer node set, a key request and a copy of
/// the RSA parameters for every signature, and buffers the canonical reference before hashing
/// it: about half of a verification's time, none of it needed for the one shape SAML uses. Here
/// the key is the `EVP_PKEY` the trust store prepared once (``TrustedKey/publicKey``), and the
/// reference is hashed while the native canonicalizer writes it.
///
/// **Order.** `SignedInfo` first: canonicalized (a few hundred bytes) and its `SignatureValue`
/// checked against each trusted key; only a `SignedInfo` a trusted key signed gets its
/// reference canonicalized and hashed. So a response signed by anyone else costs one parse and
/// one signature check per key (`key_not_trusted`), whatever its size, and a signed response
/// whose content was changed costs what a genuine one does (`signature_invalid`, digest
/// mismatch). No second pass with libxml2's canonicalizer: the differential fuzzing (`make fuzz
/// TARGET=canonicalization`) holds the native canonicalizer to libxml2's bytes wherever it does
/// not decline, and where it declines the whole signature goes to xmlsec.
///
/// **The same checks as xmlsec, or a decline.** Everything ``SignedInfoPrecheck`` refused is
/// refused before this runs. This type then takes only: `SignedInfo` = `CanonicalizationMethod`
/// (exclusive), `SignatureMethod`, one `Reference`; the `Reference` = `Transforms`,
/// `DigestMethod`, `DigestValue`, nothing else, in that order; the transforms = enveloped
/// signature then exclusive C14N; any `InclusiveNamespaces` as the only child of its method;
/// `SignatureValue` right after `SignedInfo`, then at most one `KeyInfo` and only `Object`s (xmlsec's
/// grammar); the `Reference`'s `#id` resolving (`xmlGetID`) to
/// the signature's parent. A same-document reference drops comments whatever its C14N says
/// (XML Signature 4.4.3.3), as xmlsec's `TreeWithoutComments` node set does.
enum NativeSignature {
    /// The digests are at most SHA-512's 64 bytes.
    private static let maximumDigest = 64
    /// A `DigestValue` text longer than this is no digest (SHA-512 is 88 characters).
    private static let maximumDigestText = 1024

    /// The index of the trusted key that signed, `nil` when this shape is not handled here.
    /// Throws `key_not_trusted` when no trusted key signed `SignedInfo`, `signature_invalid` when
    /// one did but the signed element's digest differs, or a value is not base64.
    /// - Precondition: ``SignedInfoPrecheck`` passed on `signature` with an element target.
    static func verify(
        signature: XMLTree.Node,
        owner: XMLTree.Node,
        ownerID: UnsafePointer<xmlChar>,
        document: borrowing ParsedDocument,
        keys: [TrustedKey],
        candidates: [Int],
        context: VerificationThreadContext
    ) throws(VerificationError) -> Int? {
        guard let shape = NativeSignatureShape(signature: signature), shape.referencesOwner(owner, ownerID: ownerID, doc: document.doc)
        else { return nil }
        // A malformed signature, as xmlsec reports it: not a question of which key.
        guard let signatureValue = Base64Text.decode(shape.signatureValue, maximum: Base64Text.maximumSignatureValue) else {
            throw VerificationError(.signatureInvalid, "the SignatureValue is not base64")
        }
        let verdict = LibXML2Canonicalization.withPrefixList(shape.signedInfoPrefixes) { list in
            context.canonicalize(element: shape.signedInfo, withComments: shape.signedInfoMethod.withComments, inclusivePrefixes: list)
                .map { signer(of: $0, signature: signatureValue, method: shape.signatureMethod, keys: keys, candidates: candidates) }
        }
        let key: Int
        switch verdict {
        case .signedBy(let index)?:
            key = index
        case .noTrustedKey?:
            throw SignatureVerifier.noTrustedKey(keys.count)
        case .undecided?, nil:
            return nil
        }
        context.nativeCanonicalizations += 1
        guard let expected = Base64Text.decode(shape.digestValue, maximum: maximumDigestText) else {
            throw VerificationError(.signatureInvalid, "digest mismatch: the DigestValue is not base64")
        }
        var digest = [UInt8](repeating: 0, count: maximumDigest)
        let subtree = SignedSubtree(apex: owner, excluded: signature)
        let length = LibXML2Canonicalization.withPrefixList(shape.referencePrefixes) { list in
            digest.withUnsafeMutableBufferPointer { out in
                context.digest(subtree, algorithm: shape.digestMethod, inclusivePrefixes: list, into: out.baseAddress!)
            }
        }
        guard let length else { return nil }
        guard length == expected.count, digest.prefix(length).elementsEqual(expected) else {
            throw VerificationError(.signatureInvalid, "digest mismatch: the signed content was changed")
        }
        return key
    }

    private enum Signer {
        case signedBy(Int)
        case noTrustedKey
        /// A key could not be judged here (an RSA-PSS key, an ECDSA value of another length).
        case undecided
    }

    /// Which candidate key's signature `signature` is over `canonical`.
    private static func signer(
        of canonical: UnsafeBufferPointer<UInt8>, signature: [UInt8], method: NativeSignatureMethod, keys: [TrustedKey], candidates: [Int]
    ) -> Signer {
        for index in candidates {
            guard let publicKey = keys[index].publicKey else { return .undecided }
            let verdict = signature.withUnsafeBufferPointer { value in
                cxmlsec_signature_verify(
                    publicKey, method.ecdsa ? 1 : 0, method.digest, canonical.baseAddress, canonical.count, value.baseAddress, value.count)
            }
            switch verdict {
            case 1: return .signedBy(index)
            case 0: continue
            default: return .undecided
            }
        }
        return .noTrustedKey
    }
}

// MARK: - NativeSignatureShape

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

// MARK: - NativeSignatureMethod

/// A `SignatureMethod` ``NativeSignature`` checks itself: RSA PKCS#1 v1.5 or ECDSA over a SHA
/// digest. Which of them a response may use is ``AlgorithmPolicy``'s decision, made before.
struct NativeSignatureMethod {
    let ecdsa: Bool
    let digest: cxmlsec_digest

    private static let known: [(uri: StaticString, ecdsa: Bool, digest: cxmlsec_digest)] = [
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", false, CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha384", false, CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmldsig-more#rsa-sha512", false, CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2000/09/xmldsig#rsa-sha1", false, CXMLSEC_DIGEST_SHA1),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256", true, CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384", true, CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512", true, CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1", true, CXMLSEC_DIGEST_SHA1),
    ]

    private static let digests: [(uri: StaticString, digest: cxmlsec_digest)] = [
        ("http://www.w3.org/2001/04/xmlenc#sha256", CXMLSEC_DIGEST_SHA256),
        ("http://www.w3.org/2001/04/xmldsig-more#sha384", CXMLSEC_DIGEST_SHA384),
        ("http://www.w3.org/2001/04/xmlenc#sha512", CXMLSEC_DIGEST_SHA512),
        ("http://www.w3.org/2000/09/xmldsig#sha1", CXMLSEC_DIGEST_SHA1),
    ]

    /// The signature method `uri` names, or `nil`.
    init?(uri: UnsafePointer<xmlChar>?) {
        guard let entry = Self.known.first(where: { XMLTree.equals(uri, $0.uri) }) else { return nil }
        ecdsa = entry.ecdsa
        digest = entry.digest
    }

    /// The digest a `DigestMethod` `uri` names, or `nil`.
    static func digest(uri: UnsafePointer<xmlChar>?) -> cxmlsec_digest? {
        digests.first(where: { XMLTree.equals(uri, $0.uri) })?.digest
    }
}

// MARK: - Base64Text

/// The base64 content of a `SignatureValue` or `DigestValue`, decoded as xmlsec decodes it
/// (`xmlNodeGetContent`, whitespace skipped).
///
/// What identity providers write — one text node of strict base64, perhaps wrapped in lines —
/// goes through samlgate's own decoder (xmlsec's reads one character at a time through a
/// state machine: a few microseconds per signature). Anything else (blanks inside, several
/// text nodes, an entity, a value the strict decoder refuses) is decoded by xmlsec's decoder,
/// so the bytes are xmlsec's either way.
enum Base64Text {
    /// A `SignatureValue` text longer than this is no signature (RSA-16384 is 2,731 characters).
    static let maximumSignatureValue = 8192

    /// The decoded bytes; `nil` when the text is longer than `maximum` characters, not base64,
    /// or decodes to nothing.
    static func decode(_ node: XMLTree.Node, maximum: Int) -> [UInt8]? {
        if let only = node.pointee.children, only.pointee.next == nil, only.pointee.type == XML_TEXT_NODE,
            let content = only.pointee.content
        {
            let length = Int(xmlStrlen(content))
            guard length <= maximum else { return nil }
            if let strict = strict(UnsafeRawBufferPointer(start: content, count: length)) { return strict }
        }
        guard let text = xmlNodeGetContent(node) else { return nil }
        defer { cxmlsec_xml_free(text) }
        guard Int(xmlStrlen(text)) <= maximum else { return nil }
        var written: UInt32 = 0
        guard xmlSecBase64DecodeInPlace(text, &written) == 0, written > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(written)))
    }

    /// Strict base64 (line breaks skipped), or `nil` when the strict decoder refuses it.
    private static func strict(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: Base64.maximumDecodedCount(text.count)) { buffer, count in
            do {
                count = try Base64.decode(text, into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failed = true
                count = 0
            }
        }
        return failed || bytes.isEmpty ? nil : bytes
    }
}
