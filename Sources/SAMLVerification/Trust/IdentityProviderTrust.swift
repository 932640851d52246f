import Foundation

/// What is trusted for one MVPD: its IdP keys (several during a rotation) and, optionally,
/// the issuer its assertions must name and the date its metadata stops being usable.
public struct IdentityProviderTrust: Sendable {
    public let mvpd: String
    /// Tried in order; any one verifying the signature is enough.
    public let keys: [TrustedKey]
    /// When set, the Assertion's `Issuer` must equal it (`issuer_mismatch`): the `issuer` file,
    /// else the metadata's `entityID`.
    public let issuer: String?
    /// The id Apple's VSA framework reports for this provider (`frameworkProviderInfo.id`);
    /// the MVPD id unless configured otherwise.
    public let platformMappingID: String
    /// The `entityID` of the metadata the keys came from, if any.
    public let entityID: String?
    /// The metadata's `validUntil`: from then on the MVPD is not ready and its responses are
    /// refused with `metadata_expired`, so stale metadata is never trusted forever.
    public let validUntil: Date?
    /// Where the trust came from: `pem`, `metadata`, `aggregate`, `remote` (fetched metadata),
    /// `remote-aggregate`, or several joined with `+`.
    public let source: String
    /// The fetched metadata the keys come from, if any (its own, or the aggregate's).
    public let metadataSource: MetadataSource?
    /// Why a cached copy of fetched metadata was present and not used (`metadata_signature_invalid:
    /// …`); the MVPD then waits for the next good fetch. Shown by `trust list` and logged at load.
    public let cachedCopyProblem: String?
    /// The `mode` file of the entry (`enforce` or `report-only`); `nil` without one: the
    /// gateway's own `mode` setting applies.
    public internal(set) var mode: EnforcementMode?
    /// The entry's `policy` file (``ProviderPolicy``): what differs from the gateway's settings
    /// for this MVPD; empty without one.
    public internal(set) var policy = ProviderPolicy()

    public init(
        mvpd: String, keys: [TrustedKey], issuer: String? = nil, platformMappingID: String? = nil,
        entityID: String? = nil, validUntil: Date? = nil, source: String = "pem", metadataSource: MetadataSource? = nil,
        cachedCopyProblem: String? = nil
    ) {
        self.mvpd = mvpd
        self.keys = keys
        self.issuer = issuer
        self.platformMappingID = platformMappingID ?? mvpd
        self.entityID = entityID
        self.validUntil = validUntil
        self.source = source
        self.metadataSource = metadataSource
        self.cachedCopyProblem = cachedCopyProblem
    }

    /// Loads each PEM (certificate or public key) into a key value; a weak key is refused
    /// (`weak_key`) unless `allowWeakKeys`, as the trust store's `allow-weak-keys` file.
    public init(mvpd: String, certificatesPEM: [String], issuer: String? = nil, allowWeakKeys: Bool = false) throws(TrustStoreError) {
        var keys: [TrustedKey] = []
        for (index, pem) in certificatesPEM.enumerated() {
            keys.append(try TrustedKey(pem: pem, source: "\(mvpd)#\(index)", allowWeak: allowWeakKeys))
        }
        self.init(mvpd: mvpd, keys: keys, issuer: issuer)
    }

    /// Whether responses for this MVPD can be verified at `now`: it has keys (fetched metadata
    /// has arrived) and its metadata has not expired.
    public func isReady(at now: Date) -> Bool {
        notReadyCode(at: now) == nil
    }

    /// Why responses for this MVPD cannot be verified at `now`, or `nil` when they can:
    /// ``VerificationError/Code/metadataUnavailable`` (no key yet: its metadata is fetched and
    /// no good copy has arrived) or ``VerificationError/Code/metadataExpired``.
    public func notReadyCode(at now: Date) -> VerificationError.Code? {
        if keys.isEmpty { return .metadataUnavailable }
        if let validUntil, now >= validUntil { return .metadataExpired }
        return nil
    }
}
