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
