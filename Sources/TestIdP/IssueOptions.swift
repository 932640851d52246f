import Foundation

/// Everything that shapes one minted response. Defaults give a realistic, valid SAML 2.0
/// attribute-query response for the Adobe Pass service provider; the other knobs build the
/// bad documents tests need (expired, wrong audience, SHA-1, HMAC, failed status, …).
public struct IssueOptions: Sendable {
    public var mvpd: String
    public var user: String
    public var attributes: [SAMLAttribute] = []
    public var sign: SignTarget = .assertion
    /// Lifetime of the assertion from ``now``.
    public var ttl: TimeInterval = 300
    /// Indent and break lines everywhere, including inside `SignedInfo`.
    public var pretty: Bool = false
    /// In compact mode, put line breaks between the `SignedInfo` children (as xmlsec's own
    /// templates do), so the signature does not survive whitespace normalization.
    public var signedInfoLineBreaks: Bool = false
    public var now: Date = Date()
    /// Override `Conditions/@NotBefore` (default: ``now``).
    public var notBefore: Date?
    /// Override `Conditions/@NotOnOrAfter` (default: ``now`` + ``ttl``).
    public var notOnOrAfter: Date?
    /// Override `SubjectConfirmationData/@NotOnOrAfter` (default: ``now`` + ``ttl``).
    public var subjectNotOnOrAfter: Date?
    /// `AuthnStatement/@SessionNotOnOrAfter` (default: ``now`` + 24 h; `nil` after init keeps the default).
    public var sessionNotOnOrAfter: Date?
    /// IdP entity id (default: `https://idp.<mvpd>.example.com/saml2/idp`).
    public var issuer: String?
    /// Leave out both `Issuer` elements (the Response's and the Assertion's), which SAML core
    /// requires: the verifier must refuse such a response (`issuer_mismatch`).
    public var omitIssuer: Bool = false
    /// Leave out the Assertion's `Issuer` only (the Response keeps its own): still refused, as
    /// SAML core requires the Assertion to name its issuer.
    public var omitAssertionIssuer: Bool = false
    public var audience: String = "https://saml.sp.auth.adobe.com"
    public var destination: String? = "https://saml.sp.auth.adobe.com/sp/ACS.saml2"
    public var inResponseTo: String?
    public var statusCode: String = "urn:oasis:names:tc:SAML:2.0:status:Success"
    /// Default: RSA-SHA256 for RSA keys, ECDSA-SHA256 for P-256 keys.
    public var signatureAlgorithm: SignatureAlgorithm?
    public var digestAlgorithm: DigestAlgorithm = .sha256
    /// `SignedInfo`'s `CanonicalizationMethod` and the `Reference`'s canonicalization transform.
    public var canonicalization: CanonicalizationAlgorithm = .exclusive
    /// Leave the canonicalization transform out of the `Reference` (only the enveloped-signature
    /// transform): XML Signature then applies inclusive C14N 1.0 to the signed content.
    public var implicitReferenceCanonicalization: Bool = false
    /// The Response's signature references the whole document (`URI=""`) instead of `#` + the
    /// Response's ID. The Assertion's signature, if any, keeps `#` + its ID.
    public var wholeDocumentReference: Bool = false
    public var keyInfo: KeyInfoStyle = .x509Certificate
    /// Pad with extra attributes until the serialized response is about this many bytes.
    public var padToSize: Int?
    /// Leave out every `NotOnOrAfter` (Conditions and SubjectConfirmationData): an assertion
    /// that never expires, which the verifier must refuse (`unbounded_validity`).
    public var omitExpiry: Bool = false
    public var responseID: String?
    public var assertionID: String?
    /// Subjects of assertions the IdP vouches for inside the signed Assertion's `saml:Advice`
    /// (SAML Core §2.6; PEFIM sends one): each an unsigned Assertion with that NameID, an
    /// attribute `advised` and conditions of its own, inside what the outer signature covers.
    public var adviceSubjects: [String] = []
    /// Secret for ``SignatureAlgorithm/hmacSHA256`` (default: the certificate's bytes, as in
    /// the classic key-confusion attack).
    public var hmacSecret: [UInt8]?

    public init(mvpd: String, user: String, attributes: [SAMLAttribute] = [], sign: SignTarget = .assertion) {
        self.mvpd = mvpd
        self.user = user
        self.attributes = attributes
        self.sign = sign
    }
}

// MARK: - Attributes

/// One `saml:Attribute` with its values.
public struct SAMLAttribute: Sendable, Hashable {
    public var name: String
    public var values: [String]

    public init(name: String, values: [String]) {
        self.name = name
        self.values = values
    }

    public init(_ name: String, _ value: String) {
        self.init(name: name, values: [value])
    }

    /// Parses the CLI form `name=value`.
    public init?(argument: String) {
        guard let eq = argument.firstIndex(of: "="), eq != argument.startIndex else { return nil }
        self.init(String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}

// MARK: - What is signed

/// Which element(s) the test IdP signs. `.none` produces an unsigned response (for tests).
public enum SignTarget: String, Sendable, CaseIterable {
    case response
    case assertion
    case both
    case none
}

// MARK: - Signature algorithms

/// XML-DSig signature methods the test IdP can use, including refused ones for negative tests.
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    case rsaSHA256
    case rsaSHA1
    case ecdsaSHA256
    case ecdsaSHA1
    /// Refused by the verifier (`algorithm_not_allowed`); signs with ``IssueOptions/hmacSecret``.
    case hmacSHA256

    public var uri: String {
        switch self {
        case .rsaSHA256: return "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
        case .rsaSHA1: return "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
        case .ecdsaSHA256: return "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
        case .ecdsaSHA1: return "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1"
        case .hmacSHA256: return "http://www.w3.org/2001/04/xmldsig-more#hmac-sha256"
        }
    }

    var isHMAC: Bool { self == .hmacSHA256 }
}

// MARK: - Digest algorithms

/// XML-DSig digest methods the test IdP can use.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256
    case sha512
    case sha1

    public var uri: String {
        switch self {
        case .sha256: return "http://www.w3.org/2001/04/xmlenc#sha256"
        case .sha512: return "http://www.w3.org/2001/04/xmlenc#sha512"
        case .sha1: return "http://www.w3.org/2000/09/xmldsig#sha1"
        }
    }
}

// MARK: - Canonicalization

/// XML canonicalization methods the test IdP can sign with (`SignedInfo` and the `Reference`).
///
/// Exclusive C14N is the SAML default and the test IdP's; inclusive C14N 1.0 and 1.1 are what
/// some identity providers use, and what a verifier must handle without loosening its other
/// defences (their signed bytes carry the namespaces of the signed element's ancestors).
public enum CanonicalizationAlgorithm: String, Sendable, CaseIterable {
    case exclusive
    case exclusiveWithComments
    case inclusive10
    case inclusive10WithComments
    case inclusive11
    case inclusive11WithComments

    public var uri: String {
        switch self {
        case .exclusive: return "http://www.w3.org/2001/10/xml-exc-c14n#"
        case .exclusiveWithComments: return "http://www.w3.org/2001/10/xml-exc-c14n#WithComments"
        case .inclusive10: return "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
        case .inclusive10WithComments: return "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
        case .inclusive11: return "http://www.w3.org/2006/12/xml-c14n11"
        case .inclusive11WithComments: return "http://www.w3.org/2006/12/xml-c14n11#WithComments"
        }
    }

    /// Exclusive C14N takes an `InclusiveNamespaces` prefix list; the inclusive methods read no child.
    public var isExclusive: Bool { self == .exclusive || self == .exclusiveWithComments }
}

// MARK: - Key info

/// What the test IdP puts into `ds:KeyInfo`. The verifier never trusts any of it; the
/// styles exist so tests can show that an embedded attacker key changes nothing.
public enum KeyInfoStyle: String, Sendable, CaseIterable {
    /// `X509Data/X509Certificate` with the signing certificate (what IdPs usually send).
    case x509Certificate
    /// `KeyValue` with the raw public key, written by xmlsec.
    case keyValue
    /// No `KeyInfo` at all.
    case none
}
