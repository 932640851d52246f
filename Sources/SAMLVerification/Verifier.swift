import CXMLSec
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Decides whether a SAML response is genuine, and returns its verified content.
///
/// **Threading.** `Verifier` is a `Sendable` value: share one across all worker threads and
/// call ``verify(_:mvpd:now:expectedInResponseTo:)`` from any of them concurrently. Each call
/// is synchronous and runs entirely on the calling thread; the C state it needs (libxml2 parser
/// context, xmlsec signature context) lives in that thread's thread-local storage, is created
/// on the thread's first call and freed when the thread exits. No C pointer crosses threads.
/// The C libraries are initialised once per process on first use. Trusted keys are shared
/// read-only. Calling from Swift concurrency tasks is safe (nothing suspends inside a call),
/// but CPU-bound: run it on the gateway's worker pool, not on an event loop.
///
/// **Order of checks.** size → known MVPD → DOCTYPE → markup limits (attributes and
/// namespace declarations, by a byte scan) → parse → structure (depth, IDs, one Assertion,
/// signature placement) → signatures (Assertion first, then Response; every signature present
/// must verify) → SAML policies → replay (last, so rejected attempts do not burn an assertion id).
public struct Verifier: Sendable {
    public let trustStore: TrustStore
    public let options: VerificationOptions
    /// `nil` disables replay protection here (CLI `--no-replay-check`, batch re-verification), or
    /// leaves it to the caller, which records ``VerifiedResponse/replayClaim`` itself (the
    /// gateway's shared store).
    public let replayCache: (any ReplayCache)?
    /// How long after its acceptance bound an assertion's replay record is kept: the largest
    /// clock skew any MVPD of the store allows (these options' own, or an MVPD's `skew` policy).
    /// Several MVPD entries may trust one IdP and issuer with different skews, and the record
    /// must outlive the loosest window that could accept the assertion again.
    let replayMargin: TimeInterval

    private static let policies: [any ResponsePolicy] = [
        StatusPolicy(),
        ExpiryBoundPolicy(),
        IssuerPolicy(),
        AudiencePolicy(),
        ValidityWindowPolicy(),
        SubjectConfirmationPolicy(),
        InResponseToPolicy(),
        DestinationPolicy(),
    ]

    public init(trustStore: TrustStore, options: VerificationOptions = VerificationOptions(), replayCache: (any ReplayCache)?) {
        self.init(
            trustStore: trustStore, options: options, replayCache: replayCache, replayMargin: max(options.clockSkew, trustStore.largestPolicySkew))
    }

    private init(trustStore: TrustStore, options: VerificationOptions, replayCache: (any ReplayCache)?, replayMargin: TimeInterval) {
        self.trustStore = trustStore
        self.options = options
        self.replayCache = replayCache
        self.replayMargin = replayMargin
    }

    /// Verifies `bytes` (raw XML, already decoded from base64/percent-encoding) for `mvpd`.
    /// - Parameters:
    ///   - now: the clock for the time checks.
    ///   - expectedInResponseTo: the id of the request this answers, when there was one.
    public func verify(
        _ bytes: [UInt8], mvpd: String, now: Date = Date(), expectedInResponseTo: String? = nil
    ) throws(VerificationError) -> VerifiedResponse {
        do {
            return try bytes.withUnsafeBytes { buffer in
                try verify(buffer, mvpd: mvpd, now: now, expectedInResponseTo: expectedInResponseTo)
            }
        } catch let error as VerificationError {
            throw error
        } catch {
            throw VerificationError(.internalError, "\(error)")
        }
    }

    /// Verifies exactly these raw XML bytes for `mvpd`. The bytes are only read during the call.
    /// Use ``verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)`` when the document
    /// will be forwarded in the cookbook's normalized form.
    public func verify(
        _ bytes: UnsafeRawBufferPointer, mvpd: String, now: Date = Date(), expectedInResponseTo: String? = nil
    ) throws(VerificationError) -> VerifiedResponse {
        let provider = try admit(bytes.count, mvpd: mvpd, now: now)
        return try scoped(to: provider).verifyAdmitted(bytes, provider: provider, mvpd: mvpd, now: now, expectedInResponseTo: expectedInResponseTo)
    }

    /// This verifier with the MVPD's own policy (``ProviderPolicy``) over its options; itself
    /// when the MVPD has none.
    private func scoped(to provider: IdentityProviderTrust) -> Verifier {
        provider.policy.isEmpty
            ? self
            : Verifier(trustStore: trustStore, options: options.applying(provider.policy), replayCache: replayCache, replayMargin: replayMargin)
    }

    private func verifyAdmitted(
        _ bytes: UnsafeRawBufferPointer, provider: IdentityProviderTrust, mvpd: String, now: Date, expectedInResponseTo: String?
    ) throws(VerificationError) -> VerifiedResponse {
        let context = try VerificationThreadContext.current()
        let checked = try VerificationArena.withWindow { () throws(VerificationError) in
            try check(bytes, provider: provider, retry: retries(bytes), now: now, expectedInResponseTo: expectedInResponseTo, context: context)
        }
        return try accept(checked, provider: provider, mvpd: mvpd, normalization: nil, now: now)
    }

    /// Verifies a response **as it will be forwarded**, and returns exactly the bytes to forward
    /// with the verdict on them: the cookbook normalization the ``UnverifiedDocument`` holds, or
    /// its original when ``NormalizationOutcome/forwardsOriginal`` — never another document.
    /// The gateway, the batch tool and `samlgate verify` all verify through here.
    ///
    /// The normalized document is verified first (one verification in the common case; when
    /// normalization changes no byte, the only one). When it does not verify, the original is:
    /// if that fails too, its error is thrown (the verdict on what the client sent); if it
    /// verifies, `fallback` decides — forward the original (`signature-preserving`), or forward
    /// the normalized document only when it parses to the same tree as the verified original
    /// (``DocumentEquivalence``), its identity then read from the normalized document; else
    /// `normalization_changes_document`. A transformation applied after verification can turn
    /// text into markup; this is how the gateway never forwards something it did not verify.
    ///
    /// Cost: a failing response costs at most two parses and two verifications (for the shape
    /// SAML identity providers sign, ``NativeSignature``: a signed content canonicalized at
    /// most twice, never without a trusted key's signature on `SignedInfo`). On the xmlsec path
    /// the first attempt on a changed document skips the libxml2 canonicalization retry (the
    /// original's attempt has it, up to ``VerificationOptions/largeDocumentSize``).
    public func verifyForForwarding(
        _ document: UnverifiedDocument, fallback: NormalizationFallback, mvpd: String, now: Date = Date(),
        expectedInResponseTo: String? = nil
    ) throws(VerificationError) -> VerifiedDocument {
        let original = document.original
        let normalized = document.normalized ?? original
        let verdict: Result<VerifiedResponse, VerificationError> = original.withUnsafeBytes { originalBytes in
            normalized.withUnsafeBytes { normalizedBytes in
                Result { () throws(VerificationError) in
                    try verify(
                        original: originalBytes, normalized: normalizedBytes, fallback: fallback, mvpd: mvpd, now: now,
                        expectedInResponseTo: expectedInResponseTo)
                }
            }
        }
        let response = try verdict.get()
        let outcome = response.normalization ?? .unchanged
        return VerifiedDocument(response: response, normalization: outcome, bytes: outcome.forwardsOriginal ? original : normalized)
    }

    /// ``verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)`` on the two documents;
    /// the result's ``VerifiedResponse/normalization`` (never `nil`) tells which one it covers.
    private func verify(
        original: UnsafeRawBufferPointer, normalized: UnsafeRawBufferPointer, fallback: NormalizationFallback,
        mvpd: String, now: Date, expectedInResponseTo: String?
    ) throws(VerificationError) -> VerifiedResponse {
        let provider = try admit(original.count, mvpd: mvpd, now: now)
        let context = try VerificationThreadContext.current()
        return try VerificationArena.withWindow { () throws(VerificationError) in
            try scoped(to: provider).verifyAdmitted(
                original: original, normalized: normalized, fallback: fallback, provider: provider, mvpd: mvpd, now: now,
                expectedInResponseTo: expectedInResponseTo, context: context)
        }
    }

    private func verifyAdmitted(
        original: UnsafeRawBufferPointer, normalized: UnsafeRawBufferPointer, fallback: NormalizationFallback,
        provider: IdentityProviderTrust, mvpd: String, now: Date, expectedInResponseTo: String?, context: VerificationThreadContext
    ) throws(VerificationError) -> VerifiedResponse {
        // The same bytes: the same storage (a document already in the cookbook's normalization,
        // the usual case, compared no further), or equal ones.
        if normalized.count == original.count
            && (original.baseAddress == normalized.baseAddress || memcmp(original.baseAddress!, normalized.baseAddress!, original.count) == 0)
        {
            let checked = try check(
                original, provider: provider, retry: retries(original), now: now, expectedInResponseTo: expectedInResponseTo, context: context)
            return try accept(checked, provider: provider, mvpd: mvpd, normalization: .unchanged, now: now)
        }
        /// The normalized document as it will be forwarded, `nil` when it does not verify.
        func normalizedVerified() throws(VerificationError) -> VerifiedResponse? {
            do throws(VerificationError) {
                let checked = try check(
                    normalized, provider: provider, retry: false, now: now, expectedInResponseTo: expectedInResponseTo, context: context)
                return try accept(checked, provider: provider, mvpd: mvpd, normalization: .verified, now: now)
            } catch  where ![.internalError, .replayed, .replayCacheFull].contains(error.code) {
                // Normalization broke something, or the response is bad: the original decides
                // (its error is the one reported, the verdict on what the client sent).
                return nil
            }
        }
        if let verified = try normalizedVerified() {
            return verified
        }
        let originalDocument = try SecureXMLParser.parse(original, limits: options.markupLimits, maxDepth: options.maxDepth, context: context)
        let checked = try check(
            originalDocument, byteCount: original.count, provider: provider, retry: retries(original), now: now,
            expectedInResponseTo: expectedInResponseTo, context: context)
        switch fallback {
        case .original:
            return try accept(checked, provider: provider, mvpd: mvpd, normalization: .original, now: now)
        case .equivalentTree:
            let refusal = VerificationError(
                .normalizationChangesDocument,
                "the signature does not survive the cookbook's whitespace normalization, and the normalized document is not "
                    + "the signed one with only whitespace changed")
            // Parsed again: the first attempt registered its IDs in (and let xmlsec work on) the
            // tree it verified, so that tree cannot be walked and checked a second time.
            guard
                let normalizedDocument = try? SecureXMLParser.parse(
                    normalized, limits: options.markupLimits, maxDepth: options.maxDepth, context: context),
                DocumentEquivalence.equivalent(originalDocument, normalizedDocument)
            else {
                throw refusal
            }
            // The identity and the policies come from the document that is forwarded, its values
            // as it says them; and as a second wall behind the tree comparison, everything read
            // from it must equal what the verified original says (identity, issuers, audiences,
            // conditions, attributes), up to the ends of the values the tree comparison lets
            // differ. No known document reaches it; it stands so that a change to either side
            // cannot let an identity through unnoticed.
            let structure = try ResponseStructure(document: normalizedDocument, maxDepth: options.maxDepth)
            let facts = try ResponseFacts(structure: structure)
            guard facts.equalsIgnoringValueEnds(checked.facts) else { throw refusal }
            try checkPolicies(
                facts, provider: provider, responseSigned: checked.outcome.kind != .assertion, now: now,
                expectedInResponseTo: expectedInResponseTo)
            let equivalent = Checked(facts: facts, responseID: String(cString: structure.responseID), outcome: checked.outcome)
            return try accept(equivalent, provider: provider, mvpd: mvpd, normalization: .equivalent, now: now)
        }
    }

    /// Whether a signature that fails with native canonicalization is checked once more with
    /// libxml2's, and every key gets a full pass when none signed `SignedInfo`
    /// (``VerificationOptions/largeDocumentSize``).
    private func retries(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count <= options.largeDocumentSize
    }

    /// Size, then a known MVPD whose metadata has not expired: the checks before any parsing.
    private func admit(_ count: Int, mvpd: String, now: Date) throws(VerificationError) -> IdentityProviderTrust {
        guard count <= options.maxSize else {
            throw VerificationError(.tooLarge, "document of \(count) bytes exceeds the \(options.maxSize)-byte limit")
        }
        guard let provider = trustStore.provider(for: mvpd) else {
            throw VerificationError(.unknownMVPD, "no trust configuration for this MVPD")
        }
        switch provider.notReadyCode(at: now) {
        case nil:
            break
        case .metadataUnavailable?:
            throw VerificationError(.metadataUnavailable, "the MVPD's metadata has not been fetched yet; the gateway has no key for it")
        default:
            throw VerificationError(.metadataExpired, "the MVPD's metadata passed its validUntil; the gateway needs fresh metadata")
        }
        return provider
    }

    /// What one document yields once its signatures and policies passed (before replay).
    struct Checked {
        var facts: ResponseFacts
        var responseID: String
        var outcome: SignatureOutcome
    }

    private func check(
        _ bytes: UnsafeRawBufferPointer, provider: IdentityProviderTrust, retry: Bool, now: Date,
        expectedInResponseTo: String?, context: VerificationThreadContext
    ) throws(VerificationError) -> Checked {
        let document = try SecureXMLParser.parse(bytes, limits: options.markupLimits, maxDepth: options.maxDepth, context: context)
        return try check(
            document, byteCount: bytes.count, provider: provider, retry: retry, now: now, expectedInResponseTo: expectedInResponseTo,
            context: context)
    }

    /// Structure → signatures → SAML policies, on one parsed document.
    private func check(
        _ document: borrowing ParsedDocument, byteCount: Int, provider: IdentityProviderTrust, retry: Bool, now: Date,
        expectedInResponseTo: String?, context: VerificationThreadContext
    ) throws(VerificationError) -> Checked {
        var algorithms = AlgorithmPolicy(
            allowSHA1: options.allowSHA1, allowInclusiveCanonicalization: options.allowInclusiveCanonicalization,
            nativeCanonicalization: options.nativeCanonicalization)
        algorithms.retryWithLibxml2 = retry
        algorithms.largeDocument = byteCount > options.largeDocumentSize
        algorithms.largeDocumentSize = options.largeDocumentSize
        let structure = try ResponseStructure(document: document, maxDepth: options.maxDepth)
        let outcome = try Self.verifySignatures(structure, document, keys: provider.keys, algorithms: algorithms, context: context)
        let facts = try ResponseFacts(structure: structure)
        try checkPolicies(
            facts, provider: provider, responseSigned: outcome.kind != .assertion, now: now,
            expectedInResponseTo: expectedInResponseTo)
        return Checked(facts: facts, responseID: String(cString: structure.responseID), outcome: outcome)
    }

    private func checkPolicies(
        _ facts: ResponseFacts, provider: IdentityProviderTrust, responseSigned: Bool, now: Date,
        expectedInResponseTo: String?
    ) throws(VerificationError) {
        var policyContext = PolicyContext(
            now: now, clockSkew: options.clockSkew, audience: options.audience, expectedIssuer: provider.issuer,
            expectedInResponseTo: expectedInResponseTo, expectedDestination: options.expectedDestination,
            responseSigned: responseSigned)
        policyContext.maxLifetime = options.maxAssertionLifetime
        for policy in Self.policies {
            try policy.check(facts, policyContext)
        }
    }

    /// Replay (last, so rejected attempts do not burn an assertion id), then the verdict.
    private func accept(
        _ checked: Checked, provider: IdentityProviderTrust, mvpd: String, normalization: NormalizationOutcome?,
        now: Date
    ) throws(VerificationError) -> VerifiedResponse {
        let facts = checked.facts
        let responseSigned = checked.outcome.kind != .assertion
        var claim: ReplayClaim?
        if let bound = facts.acceptanceBound {
            // Remember the id for as long as the assertion could be accepted (see ``ReplayClaim``).
            // IssuerPolicy has refused a response without a signed Issuer: the key never depends
            // on the MVPD the client names.
            let issuer = facts.signedIssuer(responseSigned: responseSigned) ?? ""
            claim = ReplayClaim(key: issuer + "\u{0}" + facts.assertionID, expiresAt: bound.addingTimeInterval(replayMargin))
        }
        if let replayCache, let claim {
            switch replayCache.insertIfAbsent(claim.key, expiresAt: claim.expiresAt, now: now) {
            case .recorded: break
            case .replayed: throw VerificationError(.replayed, "this assertion was already used")
            case .full: throw VerificationError(.replayCacheFull, "the replay cache is full; try again later")
            }
        }
        return VerifiedResponse(
            mvpd: mvpd, facts: facts, responseID: checked.responseID, signed: checked.outcome.kind,
            audience: options.audience, normalization: normalization,
            key: provider.keys[checked.outcome.keyIndex], replayClaim: claim)
    }

    struct SignatureOutcome {
        var kind: SignedElementKind
        var keyIndex: Int
    }

    /// Verifies every signature that is a direct child of the Assertion or the Response.
    /// Either is enough; when both are present both must verify.
    static func verifySignatures(
        _ structure: ResponseStructure, _ document: borrowing ParsedDocument, keys: [TrustedKey],
        algorithms: AlgorithmPolicy, context: VerificationThreadContext
    ) throws(VerificationError) -> SignatureOutcome {
        var keyIndex: Int?
        if let signature = structure.assertionSignature {
            keyIndex = try SignatureVerifier.verify(
                signature: signature, owner: structure.assertion, ownerID: structure.assertionID, document: document,
                keys: keys, algorithms: algorithms, context: context)
        }
        if let signature = structure.responseSignature {
            // The Response's own signature may reference the whole document (`URI=""`).
            let index = try SignatureVerifier.verify(
                signature: signature, owner: structure.response, ownerID: structure.responseID, document: document,
                keys: keys, preferredKey: keyIndex, wholeDocument: true, algorithms: algorithms, context: context)
            return SignatureOutcome(kind: keyIndex == nil ? .response : .both, keyIndex: keyIndex ?? index)
        }
        guard let keyIndex else {
            throw VerificationError(.signatureMissing, "neither the Response nor the Assertion is signed")
        }
        return SignatureOutcome(kind: .assertion, keyIndex: keyIndex)
    }
}
