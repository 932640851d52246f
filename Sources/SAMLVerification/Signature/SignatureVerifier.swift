import CXMLSec

// MARK: - SignatureVerifier

/// Verifies one enveloped `ds:Signature` against the MVPD's trusted keys only: the shape SAML
/// identity providers sign by ``NativeSignature`` (final verdict), anything else by xmlsec.
///
/// What follows is the xmlsec path.
///
/// Each trusted key is preset as the signing key (`signKey`), so `KeyInfo` is never read:
/// a key or certificate an attacker embeds there is ignored. No keys manager is attached, so
/// no certificate chain is built per document. With several keys, or a large document, the key
/// is chosen first on `SignedInfo` alone (``SignatureKeySelection``), so xmlsec makes one pass,
/// with that key; otherwise the keys are tried in order, and a digest mismatch ends the search
/// at once since it does not depend on the key.
///
/// `xmlSecDSigCtxVerify` returns 0 for a *bad* signature too: success is `status ==
/// xmlSecDSigStatusSucceeded`, exactly one SignedInfo reference that succeeded, whose URI is
/// `#` + the owner's ID, and `xmlGetID` for that ID returns the owner element itself — or, for
/// the Response's own signature when `wholeDocument` allows it, whose URI is empty (the whole
/// document, ``ReferenceTarget``), the owner being the document element and the signature its
/// direct child.
///
/// Canonicalization is native where possible (``CanonicalizationTransform``); a signature that
/// fails that way is verified once more with libxml2 canonicalizing before it is rejected, so
/// a difference between the two canonicalizers cannot reject a genuine response — up to
/// ``VerificationOptions/largeDocumentSize``, past which the native verdict is final.
enum SignatureVerifier {
    /// Returns the index of the trusted key that verified the signature.
    static func verify(
        signature: XMLTree.Node,
        owner: XMLTree.Node,
        ownerID: UnsafePointer<xmlChar>,
        document: borrowing ParsedDocument,
        keys: [TrustedKey],
        preferredKey: Int? = nil,
        wholeDocument: Bool = false,
        algorithms: AlgorithmPolicy,
        context: VerificationThreadContext
    ) throws(VerificationError) -> Int {
        let target = try SignedInfoPrecheck.check(
            signature: signature, ownerID: ownerID,
            wholeDocumentAllowed: wholeDocument && signature.pointee.parent == owner && owner == xmlDocGetRootElement(document.doc),
            algorithms: algorithms)
        guard !keys.isEmpty else {
            throw VerificationError(.keyNotTrusted, "no trusted key configured")
        }
        var order = Array(keys.indices)
        if let preferredKey, let at = order.firstIndex(of: preferredKey) {
            order.swapAt(0, at)
        }
        // The shape every SAML identity provider signs is checked without xmlsec's chain; its
        // verdict is final. Any other shape, or one the native checks cannot judge, goes on.
        if algorithms.nativeCanonicalization, target == .element,
            let index = try NativeSignature.verify(
                signature: signature, owner: owner, ownerID: ownerID, document: document, keys: keys, candidates: order, context: context)
        {
            return index
        }
        // The key is chosen on SignedInfo alone, before any digest: xmlsec then makes one pass
        // with that key. When no key signed SignedInfo, the verdict is final for a large
        // document; below that size every key gets its own pass. With one key and a small
        // document the choice would only add a signature check to xmlsec's single pass.
        var candidates = order
        if algorithms.nativeCanonicalization && (keys.count > 1 || algorithms.largeDocument) {
            switch SignatureKeySelection.select(signature: signature, keys: keys, context: context) {
            case .key(let index):
                candidates = [index]
            case .none where algorithms.largeDocument:
                throw Self.noTrustedKey(keys.count)
            case .none, .undecided:
                break
            }
        }
        let nativeBefore = context.nativeCanonicalizations
        do {
            return try verifyWithKeys(
                signature: signature, owner: owner, ownerID: ownerID, target: target, document: document, keys: keys,
                candidates: candidates, algorithms: algorithms, context: context)
        } catch
            where algorithms.nativeCanonicalization && algorithms.retryWithLibxml2
            && context.nativeCanonicalizations != nativeBefore && (error.code == .signatureInvalid || error.code == .keyNotTrusted)
        {
            // Before rejecting, let libxml2 canonicalize: a genuine response must never fail
            // because the two canonicalizers differ. Its verdict is the one reported. Only when
            // the native canonicalizer produced something: when it declined (or never got that
            // far), libxml2 already did the work, and a second pass would only double what a
            // rejected response costs.
            context.canonicalizationRetries += 1
            var libxml2 = algorithms
            libxml2.nativeCanonicalization = false
            return try verifyWithKeys(
                signature: signature, owner: owner, ownerID: ownerID, target: target, document: document, keys: keys,
                candidates: candidates, algorithms: libxml2, context: context)
        }
    }

    /// `key_not_trusted`, the same words on the native and the xmlsec path.
    static func noTrustedKey(_ count: Int) -> VerificationError {
        VerificationError(
            .keyNotTrusted,
            "the signature does not verify with any of the \(count) trusted key(s) (signed with another key, or SignedInfo altered)")
    }

    private static func verifyWithKeys(
        signature: XMLTree.Node,
        owner: XMLTree.Node,
        ownerID: UnsafePointer<xmlChar>,
        target: ReferenceTarget,
        document: borrowing ParsedDocument,
        keys: [TrustedKey],
        candidates: [Int],
        algorithms: AlgorithmPolicy,
        context: VerificationThreadContext
    ) throws(VerificationError) -> Int {
        context.nativeCanonicalization = algorithms.nativeCanonicalization
        defer { context.nativeCanonicalization = false }
        for index in candidates {
            switch try attempt(
                signature: signature, owner: owner, ownerID: ownerID, target: target, document: document,
                key: keys[index], algorithms: algorithms, ctx: context.dsig)
            {
            case .verified:
                return index
            case .wrongKey:
                continue
            }
        }
        throw noTrustedKey(keys.count)
    }

    private enum Outcome {
        case verified
        case wrongKey
    }

    private static func attempt(
        signature: XMLTree.Node,
        owner: XMLTree.Node,
        ownerID: UnsafePointer<xmlChar>,
        target: ReferenceTarget,
        document: borrowing ParsedDocument,
        key: TrustedKey,
        algorithms: AlgorithmPolicy,
        ctx: UnsafeMutablePointer<xmlSecDSigCtx>
    ) throws(VerificationError) -> Outcome {
        guard xmlSecDSigCtxInitialize(ctx, nil) == 0 else {
            throw VerificationError(.internalError, "cannot initialise the xmlsec signature context")
        }
        defer {
            // The trusted key is shared: take it back before finalize would destroy it.
            ctx.pointee.signKey = nil
            xmlSecDSigCtxFinalize(ctx)
        }
        ctx.pointee.flags = UInt32(XMLSEC_DSIG_FLAGS_IGNORE_MANIFESTS)
        // An empty URI is its own type in xmlsec: enabled only when the precheck allowed it.
        ctx.pointee.enabledReferenceUris = xmlSecTransformUriType(
            target == .wholeDocument ? xmlSecTransformUriTypeEmpty : xmlSecTransformUriTypeSameDocument)
        guard algorithms.enable(on: ctx) else {
            throw VerificationError(.internalError, "cannot enable the allowed xmlsec transforms")
        }
        ctx.pointee.signKey = key.key

        XMLSecLibrary.clearError()
        let rc = xmlSecDSigCtxVerify(ctx, signature)
        let references = Self.references(ctx)
        if rc < 0 {
            let (reason, message) = XMLSecLibrary.firstError
            XMLSecLibrary.clearError()
            switch reason {
            case XMLSEC_ERRORS_R_TRANSFORM_DISABLED:
                throw VerificationError(.algorithmNotAllowed, "xmlsec refused a transform: \(message)")
            case XMLSEC_ERRORS_R_KEY_NOT_FOUND, XMLSEC_ERRORS_R_INVALID_KEY_DATA, XMLSEC_ERRORS_R_KEY_DATA_NOT_FOUND:
                // The trusted key does not fit the signature method (e.g. an EC key for RSA).
                if references.allSatisfy({ $0.pointee.status == xmlSecDSigStatusSucceeded }) {
                    return .wrongKey
                }
                throw VerificationError(.signatureInvalid, "digest mismatch: the signed content was changed")
            case XMLSEC_ERRORS_R_INVALID_URI_TYPE:
                throw VerificationError(.referenceMismatch, "reference URI type not allowed")
            default:
                throw VerificationError(.signatureInvalid, "signature processing failed: \(message)")
            }
        }
        // A failed reference means the content digest differs: no other key can fix that.
        if references.contains(where: { $0.pointee.status != xmlSecDSigStatusSucceeded }) {
            throw VerificationError(.signatureInvalid, "digest mismatch: the signed content was changed")
        }
        guard ctx.pointee.status == xmlSecDSigStatusSucceeded else {
            return .wrongKey
        }
        // Defence in depth: xmlsec's own view of what it verified.
        guard references.count == 1, let reference = references.first,
            reference.pointee.origin == xmlSecDSigReferenceOriginSignedInfo, let uri = reference.pointee.uri
        else {
            throw VerificationError(.referenceMismatch, "the verified reference does not resolve to the signed element")
        }
        switch target {
        case .element:
            guard uri.pointee == UInt8(ascii: "#"), xmlStrEqual(uri + 1, ownerID) == 1,
                let idAttr = xmlGetID(document.doc, ownerID), idAttr.pointee.parent == owner
            else {
                throw VerificationError(.referenceMismatch, "the verified reference does not resolve to the signed element")
            }
        case .wholeDocument:
            guard uri.pointee == 0, owner == xmlDocGetRootElement(document.doc), signature.pointee.parent == owner else {
                throw VerificationError(.referenceMismatch, "the verified reference is not the whole document around this signature")
            }
        }
        return .verified
    }

    private static func references(_ ctx: UnsafeMutablePointer<xmlSecDSigCtx>) -> [xmlSecDSigReferenceCtxPtr] {
        withUnsafeMutablePointer(to: &ctx.pointee.signedInfoReferences) { list in
            let count = xmlSecPtrListGetSize(list)
            var result: [xmlSecDSigReferenceCtxPtr] = []
            result.reserveCapacity(Int(count))
            for i in 0..<count {
                if let item = xmlSecPtrListGetItem(list, i) {
                    result.append(item.assumingMemoryBound(to: xmlSecDSigReferenceCtx.self))
                }
            }
            return result
        }
    }
}

// MARK: - SignatureKeySelection

/// Which trusted key signed a `SignedInfo`, found before xmlsec computes any reference digest.
///
/// xmlsec verifies the references first — canonicalizing and hashing the whole signed element —
/// and the signature value last, so with several trusted keys (a rotation, a metadata document
/// listing several) a response signed by anyone else would cost one full pass per key, and a
/// forged response whose digests match (the forger signs it) all of them before
/// `key_not_trusted`. Here `SignedInfo` alone (a few hundred bytes) is canonicalized — natively,
/// or by libxml2 when the native canonicalizer declines the document or `SignedInfo` names
/// inclusive C14N — and its `SignatureValue` checked against each key with xmlsec's own
/// signature-method transform; xmlsec then verifies everything with the one key that matched. A
/// forger cannot change what `SignedInfo` says (its prefix list, its digest) without this check
/// failing, so past ``VerificationOptions/largeDocumentSize`` the costly passes only ever run on a
/// `SignedInfo` a trusted key signed (below it, no key matching still gives every key xmlsec's
/// full pass, behind the libxml2 safety net). Used with several trusted keys or a large document
/// (``SignatureVerifier``).
enum SignatureKeySelection: Equatable {
    /// This key signed `SignedInfo`.
    case key(Int)
    /// No trusted key signed `SignedInfo` (or its `SignatureValue` is not base64 at all).
    case none
    /// Not decided here (a canonicalization or signature-method failure inside the libraries):
    /// xmlsec tries every candidate key in turn.
    case undecided

    /// - Precondition: ``SignedInfoPrecheck`` passed on `signature`.
    static func select(signature: XMLTree.Node, keys: [TrustedKey], context: VerificationThreadContext) -> Self {
        let ds = SAMLNamespace.dsigNS
        guard let signedInfo = XMLTree.firstChildElement(signature), let doc = signature.pointee.doc,
            let method = XMLTree.childElements(signedInfo).first(where: { XMLTree.isElement($0, "CanonicalizationMethod", ns: ds) }),
            let signatureMethod = XMLTree.childElements(signedInfo).first(where: { XMLTree.isElement($0, "SignatureMethod", ns: ds) }),
            let algorithm = xmlGetNoNsProp(signatureMethod, "Algorithm")
        else { return .undecided }
        defer { cxmlsec_xml_free(algorithm) }
        guard let valueNode = XMLTree.childElements(signature).first(where: { XMLTree.isElement($0, "SignatureValue", ns: ds) }),
            let value = Base64Text.decode(valueNode, maximum: Base64Text.maximumSignatureValue)
        else { return .none }
        guard let algorithmURI = xmlGetNoNsProp(method, "Algorithm") else { return .undecided }
        let c14n = CanonicalizationMethod(uri: algorithmURI)
        cxmlsec_xml_free(algorithmURI)
        guard let c14n else { return .undecided }
        // The exclusive method's InclusiveNamespaces list, read as the exc-c14n classes read it
        // (the precheck bounded it); another child makes xmlsec fail before any digest. xmlsec's
        // inclusive classes read no child.
        var prefixes: [String]?
        if c14n.isExclusive {
            switch InclusivePrefixList.read(method) {
            case .none: break
            case .prefixes(let list): prefixes = list
            case .unreadable: return .undecided
            }
        }

        func matching(_ canonical: UnsafeBufferPointer<UInt8>) -> Self {
            for (index, key) in keys.enumerated() {
                let matches = value.withUnsafeBufferPointer { signatureBytes in
                    cxmlsec_signature_value_matches(
                        algorithm, key.key, canonical.baseAddress, UInt32(canonical.count), signatureBytes.baseAddress,
                        UInt32(signatureBytes.count))
                }
                switch matches {
                case 1: return .key(index)
                case 0: continue
                default: return .undecided
                }
            }
            return .none
        }
        return LibXML2Canonicalization.withPrefixList(prefixes) { list in
            // The native canonicalizer writes exclusive C14N only; inclusive SignedInfo (whose
            // bytes carry the namespaces of the Signature's ancestors) is libxml2's.
            if c14n.isExclusive, let native = context.canonicalize(element: signedInfo, withComments: c14n.withComments, inclusivePrefixes: list) {
                return matching(native)
            }
            guard
                case .canonical(let bytes) = LibXML2Canonicalization.canonicalize(
                    doc, apex: signedInfo, excluded: nil, method: c14n, prefixes: list)
            else { return .undecided }
            return bytes.withUnsafeBufferPointer(matching)
        }
    }
}
