import CXMLSec

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
