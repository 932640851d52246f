import CXMLSec

/// Verifies the signature SAML identity providers make — exclusive C14N, one `Reference` to the
/// signed element with the enveloped-signature and exclusive C14N transforms, RSA or ECDSA
/// over SHA-1/256/384/512 — without xmlsec's transform chain, and **declines** everything else
/// (``SignatureVerifier`` then lets xmlsec decide, as before).
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
