import CXMLSec

// MARK: - AlgorithmPolicy

/// The algorithms a SAML signature may use, checked twice: by name on the `SignedInfo`
/// before xmlsec runs (to answer `algorithm_not_allowed` precisely), and through xmlsec's own
/// enabled-transform lists (so nothing else can run even if the pre-check had a gap —
/// notably no XSLT or XPath transform, which an unsigned document could otherwise use as a
/// "transform bomb").
///
/// Allowed: RSA-SHA256/384/512 and ECDSA-SHA256/384/512 signatures, SHA-256/384/512 digests,
/// exclusive C14N with or without comments, inclusive C14N 1.0 and 1.1 with or without comments
/// unless `allowInclusiveCanonicalization` is off or the document is large, the
/// enveloped-signature transform. RSA-SHA1,
/// ECDSA-SHA1 and SHA-1 digests only with `allowSHA1`. HMAC never.
struct AlgorithmPolicy: Sendable {
    let allowSHA1: Bool
    /// Inclusive C14N 1.0 / 1.1 (``CanonicalizationMethod``) as `SignedInfo`'s method or a
    /// `Reference` transform, and a `Reference` with no canonicalization transform (XML
    /// Signature then applies inclusive C14N 1.0). Off: exclusive C14N only, named explicitly
    /// by every `Reference` (``VerificationOptions/allowInclusiveCanonicalization``).
    var allowInclusiveCanonicalization: Bool = true
    /// Canonicalize natively where ``CanonicalizationTransform`` can (else libxml2 only).
    var nativeCanonicalization: Bool = true
    /// On the xmlsec path (a shape ``NativeSignature`` does not check), verify a signature that
    /// failed with native canonicalization once more with libxml2's before rejecting it. Off for
    /// the first attempt on a normalized document (when it fails, the original is verified next,
    /// with the retry) and for large documents (see ``Verifier``).
    var retryWithLibxml2: Bool = true
    /// The document is past ``VerificationOptions/largeDocumentSize``: the key is chosen on
    /// `SignedInfo` even with one trusted key, and no key signing it is final
    /// (``SignatureVerifier``).
    var largeDocument: Bool = false
    /// ``VerificationOptions/largeDocumentSize``, for the message of a refusal it decides.
    var largeDocumentSize: Int = 64 << 10

    /// Inclusive C14N is allowed, and only for documents up to ``largeDocumentSize``: libxml2
    /// canonicalizes it (samlgate's own canonicalizer is exclusive), at up to 15 times the cost of
    /// a genuine response of the same size on hostile markup (a signed Assertion stuffed with
    /// deep or dense content whose digest then fails: 130 ms a megabyte, against 9 ms genuine
    /// and 24-28 ms for the same attack under exclusive C14N). The identity providers that sign
    /// inclusively send responses of a few kilobytes.
    var inclusiveAllowed: Bool { allowInclusiveCanonicalization && !largeDocument }

    /// Why an inclusive method is not allowed here, for `algorithm_not_allowed`.
    var inclusiveRefusal: String {
        allowInclusiveCanonicalization
            ? "inclusive C14N is accepted for documents up to \(largeDocumentSize >> 10) KiB only"
            : "only exclusive C14N is allowed"
    }

    static let enveloped: StaticString = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    static let strongSignatureMethods: [StaticString] = [
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
    ]
    static let sha1SignatureMethods: [StaticString] = [
        "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
        "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1",
    ]
    static let strongDigestMethods: [StaticString] = [
        "http://www.w3.org/2001/04/xmlenc#sha256",
        "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    ]
    static let sha1DigestMethods: [StaticString] = ["http://www.w3.org/2000/09/xmldsig#sha1"]

    func isAllowedCanonicalization(_ uri: UnsafePointer<xmlChar>?) -> Bool {
        guard let method = CanonicalizationMethod(uri: uri) else { return false }
        return method.isExclusive || inclusiveAllowed
    }

    /// The canonicalization methods this policy lets xmlsec run.
    var canonicalizationMethods: [CanonicalizationMethod] {
        CanonicalizationMethod.allCases.filter { $0.isExclusive || inclusiveAllowed }
    }

    func isAllowedTransform(_ uri: UnsafePointer<xmlChar>?) -> Bool {
        XMLTree.equals(uri, Self.enveloped) || isAllowedCanonicalization(uri)
    }

    func isAllowedSignatureMethod(_ uri: UnsafePointer<xmlChar>?) -> Bool {
        Self.strongSignatureMethods.contains { XMLTree.equals(uri, $0) }
            || (allowSHA1 && Self.sha1SignatureMethods.contains { XMLTree.equals(uri, $0) })
    }

    func isAllowedDigestMethod(_ uri: UnsafePointer<xmlChar>?) -> Bool {
        Self.strongDigestMethods.contains { XMLTree.equals(uri, $0) }
            || (allowSHA1 && Self.sha1DigestMethods.contains { XMLTree.equals(uri, $0) })
    }

    /// Enables exactly the allowed transforms on an initialised signature context.
    /// Once one transform is enabled, xmlsec refuses every other (`transform is disabled`).
    func enable(on ctx: UnsafeMutablePointer<xmlSecDSigCtx>) -> Bool {
        var ok = true
        let c14n = canonicalizationMethods.map(\.transformClass)
        var signatureTransforms: [xmlSecTransformId?] =
            c14n + [
                xmlSecOpenSSLTransformRsaSha256GetKlass(),
                xmlSecOpenSSLTransformRsaSha384GetKlass(),
                xmlSecOpenSSLTransformRsaSha512GetKlass(),
                xmlSecOpenSSLTransformEcdsaSha256GetKlass(),
                xmlSecOpenSSLTransformEcdsaSha384GetKlass(),
                xmlSecOpenSSLTransformEcdsaSha512GetKlass(),
            ]
        var referenceTransforms: [xmlSecTransformId?] =
            c14n + [
                xmlSecTransformEnvelopedGetKlass(),
                xmlSecOpenSSLTransformSha256GetKlass(),
                xmlSecOpenSSLTransformSha384GetKlass(),
                xmlSecOpenSSLTransformSha512GetKlass(),
            ]
        if allowSHA1 {
            signatureTransforms.append(xmlSecOpenSSLTransformRsaSha1GetKlass())
            signatureTransforms.append(xmlSecOpenSSLTransformEcdsaSha1GetKlass())
            referenceTransforms.append(xmlSecOpenSSLTransformSha1GetKlass())
        }
        for id in signatureTransforms where xmlSecDSigCtxEnableSignatureTransform(ctx, id) < 0 {
            ok = false
        }
        for id in referenceTransforms where xmlSecDSigCtxEnableReferenceTransform(ctx, id) < 0 {
            ok = false
        }
        return ok
    }
}

// MARK: - CanonicalizationMethod

/// The XML canonicalization algorithms a SAML signature may name, as `SignedInfo`'s
/// `CanonicalizationMethod` or as a `Reference` transform.
///
/// Exclusive C14N is what SAML's own profile recommends and what most identity providers use;
/// samlgate canonicalizes it natively (``CanonicalizationTransform``). Inclusive C14N 1.0 and
/// 1.1 are XML Signature's own defaults (inclusive 1.0 is what applies when a `Reference` names
/// no canonicalization), and some identity providers sign with them: those go through libxml2's
/// canonicalizer, run by xmlsec's own transform classes. Inclusive C14N renders every namespace declaration in scope — the
/// ancestors' included — so the signed bytes of an element depend on the document around it.
enum CanonicalizationMethod: CaseIterable, Sendable {
    case exclusive
    case exclusiveWithComments
    case inclusive10
    case inclusive10WithComments
    case inclusive11
    case inclusive11WithComments

    /// The algorithm URI.
    var uri: StaticString {
        switch self {
        case .exclusive: "http://www.w3.org/2001/10/xml-exc-c14n#"
        case .exclusiveWithComments: "http://www.w3.org/2001/10/xml-exc-c14n#WithComments"
        case .inclusive10: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
        case .inclusive10WithComments: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
        case .inclusive11: "http://www.w3.org/2006/12/xml-c14n11"
        case .inclusive11WithComments: "http://www.w3.org/2006/12/xml-c14n11#WithComments"
        }
    }

    /// The method `uri` names, or `nil` for anything else.
    init?(uri: UnsafePointer<xmlChar>?) {
        guard let method = Self.allCases.first(where: { XMLTree.equals(uri, $0.uri) }) else { return nil }
        self = method
    }

    var isExclusive: Bool { self == .exclusive || self == .exclusiveWithComments }

    var withComments: Bool {
        self == .exclusiveWithComments || self == .inclusive10WithComments || self == .inclusive11WithComments
    }

    /// libxml2's `xmlC14NMode` for this method.
    var libxml2Mode: Int32 {
        switch self {
        case .exclusive, .exclusiveWithComments: Int32(XML_C14N_EXCLUSIVE_1_0.rawValue)
        case .inclusive10, .inclusive10WithComments: Int32(XML_C14N_1_0.rawValue)
        case .inclusive11, .inclusive11WithComments: Int32(XML_C14N_1_1.rawValue)
        }
    }

    /// The transform class xmlsec runs for this method: samlgate's exclusive classes (which
    /// replaced xmlsec's in its registry, see ``CanonicalizationTransform``), xmlsec's own
    /// inclusive ones.
    var transformClass: xmlSecTransformId? {
        switch self {
        case .exclusive: cxmlsec_exc_c14n_klass()
        case .exclusiveWithComments: cxmlsec_exc_c14n_with_comments_klass()
        case .inclusive10: xmlSecTransformInclC14NGetKlass()
        case .inclusive10WithComments: xmlSecTransformInclC14NWithCommentsGetKlass()
        case .inclusive11: xmlSecTransformInclC14N11GetKlass()
        case .inclusive11WithComments: xmlSecTransformInclC14N11WithCommentsGetKlass()
        }
    }
}
