import CXMLSec
import Foundation

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
/// **Order of checks.** size → known MVPD → DOCTYPE → parse → structure (depth, IDs,
/// one Assertion, signature placement) → signatures (Assertion first, then Response; every
/// signature present must verify) → SAML policies → normalization probe → replay (last, so
/// rejected attempts do not burn an assertion id).
public struct Verifier: Sendable {
    public let trustStore: TrustStore
    public let options: VerificationOptions
    /// `nil` disables replay protection (CLI `--no-replay-check`, batch re-verification).
    public let replayCache: (any ReplayCache)?

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
        self.trustStore = trustStore
        self.options = options
        self.replayCache = replayCache
    }

    /// Verifies `bytes` (raw XML, already decoded from base64/percent-encoding) for `mvpd`.
    /// - Parameters:
    ///   - now: the clock for the time checks.
    ///   - expectedInResponseTo: the id of the request this answers, when there was one.
    public func verify(_ bytes: [UInt8], mvpd: String, now: Date = Date(), expectedInResponseTo: String? = nil) throws(VerificationError) -> VerifiedResponse {
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

    /// Verifies raw XML bytes for `mvpd`. The bytes are only read during the call.
    public func verify(_ bytes: UnsafeRawBufferPointer, mvpd: String, now: Date = Date(), expectedInResponseTo: String? = nil) throws(VerificationError) -> VerifiedResponse {
        guard bytes.count <= options.maxSize else {
            throw VerificationError(.tooLarge, "document of \(bytes.count) bytes exceeds the \(options.maxSize)-byte limit")
        }
        guard let provider = trustStore.provider(for: mvpd) else {
            throw VerificationError(.unknownMVPD, "no trust configuration for this MVPD")
        }
        let context = try VerificationThreadContext.current()
        let algorithms = AlgorithmPolicy(allowSHA1: options.allowSHA1, nativeCanonicalization: options.nativeCanonicalization)

        let facts: ResponseFacts
        let responseID: String
        let outcome: SignatureOutcome
        let survives: Bool?
        do {
            let document = try SecureXMLParser.parse(bytes, context: context)
            let structure = try ResponseStructure(document: document, maxDepth: options.maxDepth)
            outcome = try Self.verifySignatures(structure, document, keys: provider.keys, algorithms: algorithms, context: context)
            facts = try ResponseFacts(structure: structure)
            responseID = String(cString: structure.responseID)

            let policyContext = PolicyContext(
                now: now, clockSkew: options.clockSkew, audience: options.audience, expectedIssuer: provider.issuer,
                expectedInResponseTo: expectedInResponseTo, expectedDestination: options.expectedDestination,
                responseSigned: outcome.kind != .assertion)
            for policy in Self.policies {
                try policy.check(facts, policyContext)
            }

            survives = options.checkNormalization
                ? NormalizationProbe.survives(bytes, structure: structure, expected: outcome.kind, key: provider.keys[outcome.keyIndex],
                                              algorithms: algorithms, maxDepth: options.maxDepth, context: context)
                : nil
        }

        if let replayCache, let bound = facts.acceptanceBound {
            // Remember the id for as long as the assertion could be accepted, keyed by the
            // signed issuer (not the caller-chosen MVPD name, which several entries may share).
            let expiry = bound.addingTimeInterval(options.clockSkew)
            let issuer = facts.signedIssuer(responseSigned: outcome.kind != .assertion) ?? "mvpd:" + mvpd
            switch replayCache.insertIfAbsent(issuer + "\u{0}" + facts.assertionID, expiresAt: expiry, now: now) {
            case .recorded: break
            case .replayed: throw VerificationError(.replayed, "this assertion was already used")
            case .full: throw VerificationError(.replayCacheFull, "the replay cache is full; try again later")
            }
        }
        return VerifiedResponse(mvpd: mvpd, facts: facts, responseID: responseID, signed: outcome.kind, audience: options.audience,
                                survivesNormalization: survives, keySource: provider.keys[outcome.keyIndex].source)
    }

    struct SignatureOutcome {
        var kind: SignedElementKind
        var keyIndex: Int
    }

    /// Verifies every signature that is a direct child of the Assertion or the Response.
    /// Either is enough; when both are present both must verify.
    static func verifySignatures(_ structure: ResponseStructure, _ document: borrowing ParsedDocument, keys: [TrustedKey],
                                 algorithms: AlgorithmPolicy, context: VerificationThreadContext) throws(VerificationError) -> SignatureOutcome {
        var keyIndex: Int?
        if let signature = structure.assertionSignature {
            keyIndex = try SignatureVerifier.verify(
                signature: signature, owner: structure.assertion, ownerID: structure.assertionID, document: document,
                keys: keys, algorithms: algorithms, context: context)
        }
        if let signature = structure.responseSignature {
            let index = try SignatureVerifier.verify(
                signature: signature, owner: structure.response, ownerID: structure.responseID, document: document,
                keys: keys, preferredKey: keyIndex, algorithms: algorithms, context: context)
            return SignatureOutcome(kind: keyIndex == nil ? .response : .both, keyIndex: keyIndex ?? index)
        }
        guard let keyIndex else {
            throw VerificationError(.signatureMissing, "neither the Response nor the Assertion is signed")
        }
        return SignatureOutcome(kind: .assertion, keyIndex: keyIndex)
    }
}
