import Foundation

/// A SAML response that passed every check: signature by a trusted key over the element its
/// values come from, structure, status, issuer, audience, validity window and replay.
///
/// Only ``Verifier`` can create one (type-state, as swift-certificates does with its
/// validated chains): code that holds a `VerifiedResponse` cannot be holding unverified data.
/// Contains personal data (``nameID``, ``attributes``): never log it.
public struct VerifiedResponse: Sendable {
    /// The MVPD the caller named and whose keys verified the signature.
    public let mvpd: String
    /// The Assertion's `Issuer` (or the Response's when the Assertion has none).
    public let issuer: String?
    public let signed: SignedElementKind
    /// Full text content of `Subject/NameID` (comments cannot truncate it).
    public let nameID: String?
    /// `Attribute` `Name` → full text of each `AttributeValue`, in document order.
    public let attributes: [String: [String]]
    public let responseID: String
    public let assertionID: String
    /// `Conditions` `NotBefore` / `NotOnOrAfter`.
    public let notBefore: Date?
    public let notOnOrAfter: Date?
    /// The earliest `AuthnStatement` `SessionNotOnOrAfter`, if present.
    public let sessionNotOnOrAfter: Date?
    /// The audience that was required and found.
    public let audience: String
    /// Which document the verdict covers when it was verified for forwarding: the normalized
    /// one (``NormalizationOutcome/forwardsOriginal`` false) or the original. `nil` when exactly
    /// the given bytes were verified (``Verifier/verify(_:mvpd:now:expectedInResponseTo:)-(UnsafeRawBufferPointer,_,_,_)``).
    public let normalization: NormalizationOutcome?
    /// Whether the signature(s) verify on the cookbook-normalized document itself (`nil` when
    /// not verified for forwarding).
    public var survivesNormalization: Bool? { normalization?.signatureSurvives }
    /// Which trusted key verified (``TrustedKey/source``), for rotation monitoring.
    public let keySource: String
    /// ``TrustedKey/shortFingerprint`` of that key: the metrics label that shows when a
    /// rotated-out key stops being used.
    public let keyFingerprint: String

    /// What replay protection records for this assertion (`nil` when it has no acceptance
    /// bound, which ``ExpiryBoundPolicy`` refuses): already recorded when the verifier had a
    /// ``ReplayCache``; to be recorded by the caller otherwise.
    public let replayClaim: ReplayClaim?

    init(
        mvpd: String, facts: ResponseFacts, responseID: String, signed: SignedElementKind, audience: String,
        normalization: NormalizationOutcome?, key: TrustedKey, replayClaim: ReplayClaim?
    ) {
        self.mvpd = mvpd
        self.issuer = facts.signedIssuer(responseSigned: signed != .assertion)
        self.signed = signed
        self.nameID = facts.nameID
        self.attributes = facts.attributes
        self.responseID = responseID
        self.assertionID = facts.assertionID
        self.notBefore = facts.notBefore
        self.notOnOrAfter = facts.acceptanceBound
        self.sessionNotOnOrAfter = facts.sessionNotOnOrAfter
        self.audience = audience
        self.normalization = normalization
        self.keySource = key.source
        self.keyFingerprint = key.shortFingerprint
        self.replayClaim = replayClaim
    }
}

// MARK: - SignedElementKind

/// Which element(s) carried a verified signature.
public enum SignedElementKind: String, Sendable, Hashable {
    case response
    case assertion
    case both
}
