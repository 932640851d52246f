// What is trusted for one MVPD, and what its trust-store entry sets apart from the gateway's
// settings: its enforcement mode and its own verification policy.

import Foundation

// MARK: - IdentityProviderTrust

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

// MARK: - EnforcementMode

/// Whether the gateway acts on its verdicts for an MVPD: `enforce` refuses what fails
/// verification; `report-only` verifies just the same but forwards what it would refuse, and
/// reports it — how a verifier is put in front of a backend that takes sign-ins today without
/// refusing genuine users on day one.
public enum EnforcementMode: String, Sendable, CaseIterable {
    case enforce
    case reportOnly = "report-only"
}

// MARK: - ProviderPolicy

/// One MVPD's own verification policy, over the gateway's settings: the trust-store entry's
/// `policy` file, `key: value` lines (`#` starts a comment). IdPs differ — one's clock runs
/// late, one still signs with SHA-1, one names another audience — and one setting for all would
/// loosen every MVPD for the sake of one.
///
/// Keys: `skew` (seconds, 0…3600), `audience`, `max-assertion-lifetime` (seconds, 1…31536000:
/// an assertion still acceptable longer than this after it is verified is refused,
/// `validity_too_long`), `allow-sha1` and `allow-inclusive-c14n` (`true` or `false`),
/// `forward-form` (`cookbook` or `signature-preserving`). An unknown key or a bad value stops the
/// load, naming the line: a typo must not leave an MVPD on a looser default.
public struct ProviderPolicy: Sendable, Equatable {
    public var skew: TimeInterval?
    public var audience: String?
    public var maxAssertionLifetime: TimeInterval?
    public var allowSHA1: Bool?
    public var allowInclusiveCanonicalization: Bool?
    /// What is forwarded when normalization breaks the signature (the gateway's `forward-form`).
    public var forwardForm: NormalizationFallback?

    public init() {}

    /// No key set: the gateway's settings apply unchanged.
    public var isEmpty: Bool { self == ProviderPolicy() }

    /// The policy file's name in an MVPD's directory.
    static let fileName = "policy"
    /// A policy file is a few lines; anything larger is not one.
    static let maximumFileBytes = 4096

    /// Reads `path`; `nil` when there is no such file.
    static func read(_ path: String, entry: String) throws(TrustStoreError) -> ProviderPolicy? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), data.count <= maximumFileBytes,
            let text = String(data: data, encoding: .utf8)
        else {
            throw TrustStoreError("trust store entry \(entry): cannot read its policy file (at most \(maximumFileBytes) bytes of UTF-8)")
        }
        var policy = ProviderPolicy()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?.trimmingCharacters(in: .whitespaces) ?? ""
            guard !line.isEmpty else { continue }
            func bad(_ expected: String) -> TrustStoreError {
                TrustStoreError("trust store entry \(entry): policy line \(index + 1): \(expected)")
            }
            guard let colon = line.firstIndex(of: ":") else { throw bad("expected key: value") }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            func flag() throws(TrustStoreError) -> Bool {
                switch value {
                case "true": return true
                case "false": return false
                default: throw bad("\(key) must be true or false")
                }
            }
            switch key {
            case "skew":
                guard let seconds = Double(value), seconds >= 0, seconds <= 3600 else { throw bad("skew must be seconds in 0...3600") }
                policy.skew = seconds
            case "audience":
                guard !value.isEmpty else { throw bad("audience must be a URI") }
                policy.audience = value
            case "max-assertion-lifetime":
                guard let seconds = Double(value), seconds >= 1, seconds <= 31_536_000 else {
                    throw bad("max-assertion-lifetime must be seconds in 1...31536000")
                }
                policy.maxAssertionLifetime = seconds
            case "allow-sha1": policy.allowSHA1 = try flag()
            case "allow-inclusive-c14n": policy.allowInclusiveCanonicalization = try flag()
            case "forward-form":
                switch value {
                case "cookbook": policy.forwardForm = .equivalentTree
                case "signature-preserving": policy.forwardForm = .original
                default: throw bad("forward-form must be cookbook or signature-preserving")
                }
            default:
                throw bad(
                    "unknown key \"\(key.prefix(40))\" (skew, audience, max-assertion-lifetime, allow-sha1, allow-inclusive-c14n, forward-form)")
            }
        }
        return policy
    }
}

extension VerificationOptions {
    /// These options with an MVPD's own policy laid over them (``ProviderPolicy``).
    public func applying(_ policy: ProviderPolicy) -> VerificationOptions {
        var options = self
        if let skew = policy.skew { options.clockSkew = skew }
        if let audience = policy.audience { options.audience = audience }
        if let lifetime = policy.maxAssertionLifetime { options.maxAssertionLifetime = lifetime }
        if let sha1 = policy.allowSHA1 { options.allowSHA1 = sha1 }
        if let inclusive = policy.allowInclusiveCanonicalization { options.allowInclusiveCanonicalization = inclusive }
        return options
    }
}
