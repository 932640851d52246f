import CXMLSec

/// Which trusted key signed a `SignedInfo`, found before xmlsec computes any reference digest.
///
/// xmlsec verifies the references first — canonicalizing and hashing the whole signed element —
/// and the signature value last, so with several trusted keys (a rotation, a metadata document
/// listing several) a response signed by anyone else cost one full pass per key, and a forged
/// response whose digests match (the forger signs it) cost all of them before `key_not_trusted`.
/// Here `SignedInfo` alone (a few hundred bytes) is canonicalized — natively, or by libxml2 when
/// the native canonicalizer declines the document or `SignedInfo` names inclusive C14N — and its `SignatureValue` checked against
/// each key with xmlsec's own signature-method transform; xmlsec then verifies everything with
/// the one key that matched. A forger cannot change what `SignedInfo` says (its prefix list,
/// its digest) without this check failing, so past ``VerificationOptions/largeDocumentSize``
/// the costly passes only ever run on a `SignedInfo` a trusted key signed (below it, no key
/// matching still gives every key xmlsec's full pass, behind the libxml2 safety net). Used with
/// several trusted keys or a large document (``SignatureVerifier``).
enum SignatureKeySelection: Equatable {
    /// This key signed `SignedInfo`.
    case key(Int)
    /// No trusted key signed `SignedInfo` (or its `SignatureValue` is not base64 at all).
    case none
    /// Not decided here (a canonicalization or signature-method failure inside the libraries):
    /// xmlsec tries the keys as before.
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
