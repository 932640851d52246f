import Dispatch
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification

/// Which token-exchange route a request came in on, with what the route says about the MVPD;
/// decides the required fields. (Its name in metrics and logs is ``GatewayRoute/label``.)
@_spi(Benchmarks) public enum ExchangeRoute: Sendable {
    /// `POST /api/v1/tokens/authn`: the MVPD is the form field `mvpd`.
    case v1
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`: the MVPD comes from the partner status header.
    case v2(mvpd: String)
}

/// How the SAML work of one exchange ends: one value, decided in one place
/// (``ExchangeProcessor/verdict(for:mvpd:store:reported:)``) for everything report-only touches.
@_spi(Benchmarks) public enum ExchangeVerdict: Sendable {
    /// Verified: the body goes to the backend.
    case forward(PreparedExchange)
    /// Report-only: enforcing would refuse with `wouldRefuse`, and the body goes to the backend.
    /// Nothing was verified, so the exchange's verified facts (normalization, key, replay claim)
    /// say nothing.
    case report(PreparedExchange, wouldRefuse: GatewayError)
    /// Refused; `mvpd` is the trust store's MVPD the exchange was for, once one was named (v1:
    /// its readable `mvpd` field; v2: the partner status), so the refusal is counted per MVPD.
    case refuse(GatewayError, mvpd: String?)
}

/// The outcome of the SAML work for one exchange: the body to forward and what to count.
@_spi(Benchmarks) public struct PreparedExchange: Sendable {
    /// The form body for the upstream: the client's fields byte for byte, with `SAMLResponse`
    /// replaced by its encoded form (report-only: encoded from the normalized document, or the
    /// client's body unchanged when it could not be decoded).
    public var upstreamBody: ByteBuffer
    public var mvpd: String
    /// The form the client sent `SAMLResponse` in.
    public var form: SAMLForm
    /// Which document was verified and forwarded: the normalized one, or (`signature-preserving`,
    /// when normalization breaks the signature) the original.
    public var normalization: NormalizationOutcome = .unchanged
    /// ``TrustedKey/shortFingerprint`` of the key that verified the signature.
    public var keyFingerprint = ""
    /// What the shared replay store must record before the exchange is forwarded (already
    /// recorded by the verifier when the processor has an in-process ``ReplayCache``).
    public var replayClaim: ReplayClaim?
    /// Stage timings in nanoseconds, for the latency histograms.
    public var parseNanos: UInt64 = 0
    public var verifyNanos: UInt64 = 0
    public var encodeNanos: UInt64 = 0
    /// With an audit trail: the hex SHA-256 of the replay claim's key (``AuditDigest``).
    public var assertionHash: String?
    /// With an audit key: the hex HMAC of the NameID (``AuditKey``), never the NameID itself.
    public var subjectHMAC: String?
}

/// The SAML work of a token exchange, run on a worker thread, as steps: the form read and its
/// rules checked with the MVPD named (``ExchangeForm``) → `SAMLResponse` decoded to XML, whatever
/// form it came in → normalized the cookbook's way → the document that will be forwarded verified
/// for the MVPD → exactly those bytes base64- and percent-encoded into the body to forward. A step
/// that refuses ends the work there, and ``verdict(for:mvpd:store:reported:)`` decides — the one
/// place report-only is decided — whether the refusal is enforced or reported.
@_spi(Benchmarks) public struct ExchangeProcessor: Sendable {
    public let trustStore: ReloadableTrustStore
    public let options: VerificationOptions
    public let replayCache: (any ReplayCache)?
    public let forwardForm: ForwardForm
    /// Set when there is an audit trail (`audit-log`): each verified exchange then carries its
    /// assertion's digest and, with a key, its subject's HMAC (``ExchangeAudit``).
    var audit: ExchangeAudit?
    /// The gateway's `mode`, for the MVPDs without a `mode` file of their own (and requests
    /// that name none).
    public var mode: EnforcementMode = .enforce

    public static let samlField = "SAMLResponse"

    public init(trustStore: ReloadableTrustStore, options: VerificationOptions, replayCache: (any ReplayCache)?, forwardForm: ForwardForm) {
        self.trustStore = trustStore
        self.options = options
        self.replayCache = replayCache
        self.forwardForm = forwardForm
    }

    /// - Parameter store: the trust snapshot of this request (the one the v2 partner status was
    ///   resolved against); the current one when `nil`.
    public func prepare(body: ByteBuffer, route: ExchangeRoute, store: TrustStore? = nil, now: Date = Date()) -> ExchangeVerdict {
        let store = store ?? trustStore.current
        return body.withUnsafeReadableBytes { bytes in
            prepare(bytes, original: body, route: route, store: store, now: now)
        }
    }

    // MARK: - the one report-only decision

    /// Whether the verdicts for `mvpd` are reported rather than enforced: its `mode` file, else
    /// the gateway's `mode`. A request that names no MVPD of the store (its fields unreadable,
    /// the `mvpd` field missing or unknown) could be meant for any of them: reported only when
    /// the gateway is report-only and no MVPD is enforced by its own `mode` file — else a
    /// malformed request would be a way past an enforced MVPD.
    func reporting(_ mvpd: String?, in store: TrustStore) -> Bool {
        if let mvpd, let provider = store.provider(for: mvpd) { return (provider.mode ?? mode) == .reportOnly }
        return mode == .reportOnly && !store.providers.values.contains { $0.mode == .enforce }
    }

    /// A refusal of an exchange for `mvpd`: enforced, or — report-only — the body `reported`
    /// makes goes to the backend, reported as what enforcing would have refused.
    func verdict(for error: GatewayError, mvpd: String?, store: TrustStore, reported: () -> PreparedExchange) -> ExchangeVerdict {
        reporting(mvpd, in: store) ? .report(reported(), wouldRefuse: error) : .refuse(error, mvpd: mvpd)
    }

    // MARK: - the steps

    private func prepare(
        _ body: UnsafeRawBufferPointer, original: ByteBuffer, route: ExchangeRoute, store: TrustStore, now: Date
    )
        -> ExchangeVerdict
    {
        let start = DispatchTime.now().uptimeNanoseconds
        // Report-only, and nothing of the document could be encoded: the client's body as it came.
        func unencoded(_ error: GatewayError, mvpd: String?) -> ExchangeVerdict {
            verdict(for: error, mvpd: mvpd, store: store) {
                PreparedExchange(upstreamBody: original, mvpd: mvpd ?? GatewayMetrics.unknownMVPD, form: .raw)
            }
        }
        let form: ExchangeForm
        do throws(ExchangeForm.Refusal) {
            form = try ExchangeForm.read(body, route: route, store: store)
        } catch {
            return unencoded(error.error, mvpd: error.mvpd)
        }
        let unverified: UnverifiedDocument, samlForm: SAMLForm
        do throws(GatewayError) {
            (unverified, samlForm) = try Self.decodeSAMLResponse(UnsafeRawBufferPointer(rebasing: body[form.saml.value]))
        } catch {
            return unencoded(error, mvpd: form.mvpd)
        }
        let parsed = DispatchTime.now().uptimeNanoseconds

        let verifier = Verifier(trustStore: store, options: options, replayCache: replayCache)
        let verified: VerifiedDocument
        do throws(VerificationError) {
            verified = try verifier.verifyForForwarding(
                unverified,
                fallback: store.provider(for: form.mvpd)?.policy.forwardForm ?? (forwardForm == .signaturePreserving ? .original : .equivalentTree),
                mvpd: form.mvpd, now: now)
        } catch {
            // Report-only: forwarded as enforcing would have forwarded a valid one, encoded once
            // the cookbook's way from the normalized document.
            return verdict(for: GatewayError(error), mvpd: form.mvpd, store: store) {
                let checked = DispatchTime.now().uptimeNanoseconds
                let out = unverified.withNormalizedBytes { normalized in
                    form.upstreamBody(body, capacity: CookbookEncoder.maximumEncodedCount(normalized.count)) {
                        CookbookEncoder.encodeWithoutNormalizing(normalized, into: &$0)
                    }
                }
                return PreparedExchange(
                    upstreamBody: out, mvpd: form.mvpd, form: samlForm, parseNanos: parsed - start, verifyNanos: checked - parsed,
                    encodeNanos: DispatchTime.now().uptimeNanoseconds - checked)
            }
        }
        let checked = DispatchTime.now().uptimeNanoseconds

        let out = form.upstreamBody(body, capacity: verified.maximumEncodedCount) { verified.encode(into: &$0) }
        let encoded = DispatchTime.now().uptimeNanoseconds
        let (assertionHash, subjectHMAC) = audit?.facts(of: verified.response) ?? (nil, nil)
        return .forward(
            PreparedExchange(
                upstreamBody: out, mvpd: form.mvpd, form: samlForm, normalization: verified.normalization,
                keyFingerprint: verified.response.keyFingerprint, replayClaim: verified.response.replayClaim, parseNanos: parsed - start,
                verifyNanos: checked - parsed, encodeNanos: encoded - checked, assertionHash: assertionHash, subjectHMAC: subjectHMAC))
    }

    /// `SAMLResponse` form-decoded, then (base64 and encoded forms) decoded to XML in place, in
    /// one array: the request's only copy of the document, encoded from directly when it is
    /// forwarded as decoded (already the cookbook's normalization, or the signature-preserving
    /// fallback); normalization, when it changes anything, writes one more. A form field has exact
    /// bounds: nothing is trimmed (a space at its ends is a `+` the client left unescaped).
    private static func decodeSAMLResponse(_ field: UnsafeRawBufferPointer) throws(GatewayError) -> (UnverifiedDocument, SAMLForm) {
        var outcome: Result<SAMLForm, GatewayError> = .success(.raw)
        let xml = [UInt8](unsafeUninitializedCapacity: field.count + 4) { storage, count in
            outcome = Result { () throws(GatewayError) in
                let scratch = UnsafeMutableRawBufferPointer(storage)
                let value = UnsafeRawBufferPointer(rebasing: scratch[..<(try FormBody.decode(field, into: scratch, field: samlField))])
                do throws(SAMLEncodingError) {
                    // The value itself, or its decoding written from the front of `scratch`.
                    let (decoded, form) = try CookbookDecoder.xml(detectingFormOf: value, trimmingWhitespace: false, scratch: scratch)
                    assert(decoded.baseAddress == UnsafeRawPointer(scratch.baseAddress), "the XML starts at the front")
                    count = decoded.count
                    return form
                } catch {
                    throw GatewayError(error, parameter: samlField)
                }
            }
        }
        let form = try outcome.get()
        do throws(SAMLEncodingError) {
            // The cookbook's normalization comes first, then the verdict on the document forwarded
            // (see ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``).
            return (try UnverifiedDocument(xml, decodedFrom: form), form)
        } catch {
            throw GatewayError(error, parameter: samlField)
        }
    }
}

/// The first step of an exchange's SAML work: its form body read (``FormBody``), the fields the
/// route requires checked, and the MVPD named — as early as it can be, so that the MVPD's `mode`
/// decides for the refusals of the other fields too.
struct ExchangeForm {
    /// A refusal of the form, with the trust store's MVPD it names when it names one.
    struct Refusal: Error {
        let error: GatewayError
        let mvpd: String?
    }

    static let v1Required = ["requestor", "deviceId", "mvpd", "deviceType", ExchangeProcessor.samlField]
    /// Fields whose second copy could make us verify one value and the backend read another.
    /// Each with its key, the lower-case bytes a spelling of it folds to (see ``FormBody/parse(_:unique:)``).
    static let uniqueFields: [(key: [UInt8], name: String)] =
        ["requestor", "deviceId", "mvpd", "deviceType", ExchangeProcessor.samlField, "deviceUser", "appId"].map {
            (Array($0.lowercased().utf8), $0)
        }
    static let deviceTypes: Set<String> = ["iOS", "tvOS"]

    let fields: [FormField]
    let mvpd: String
    let saml: FormField

    static func read(_ body: UnsafeRawBufferPointer, route: ExchangeRoute, store: TrustStore) throws(Refusal) -> ExchangeForm {
        // v2: the partner status named the MVPD before the body was read.
        var named: String?
        if case .v2(let partner) = route { named = partner }
        do throws(GatewayError) {
            let fields = try FormBody.parse(body, unique: uniqueFields)
            func field(_ name: String) -> FormField? { fields.first { $0.name == name } }
            func text(_ name: String) throws(GatewayError) -> String {
                guard let found = field(name) else { throw GatewayError.missingParameter(name) }
                return try FormBody.decodeText(UnsafeRawBufferPointer(rebasing: body[found.value]), field: name)
            }
            if case .v1 = route {
                if field("mvpd") != nil, let claimed = try? text("mvpd"), store.provider(for: claimed) != nil { named = claimed }
                for name in v1Required where (field(name)?.value.isEmpty ?? true) {
                    throw GatewayError.missingParameter(name)
                }
                guard deviceTypes.contains(try text("deviceType")) else {
                    throw GatewayError.invalidParameter("deviceType", "must be iOS or tvOS")
                }
                let claimed = try text("mvpd")
                guard store.provider(for: claimed) != nil else {
                    throw GatewayError(
                        status: 400, code: .unknownMVPD, message: "no trust configuration for this MVPD",
                        details: [("parameter", .string("mvpd"))])
                }
                named = claimed
            }
            guard let mvpd = named else { preconditionFailure("v1 names the MVPD from its form, v2 from its partner status") }
            guard let saml = field(ExchangeProcessor.samlField), !saml.value.isEmpty else {
                throw GatewayError.missingParameter(ExchangeProcessor.samlField)
            }
            return ExchangeForm(fields: fields, mvpd: mvpd, saml: saml)
        } catch {
            throw Refusal(error: error, mvpd: named)
        }
    }

    /// The body for the upstream: the client's fields byte for byte, `SAMLResponse`'s value
    /// written by `encode` (at most `capacity` bytes).
    func upstreamBody(_ body: UnsafeRawBufferPointer, capacity: Int, encode: (inout ByteBuffer) -> Void) -> ByteBuffer {
        var out = ByteBufferAllocator().buffer(capacity: body.count + capacity + 16)
        var first = true
        for item in fields {
            if !first { out.writeInteger(UInt8(ascii: "&")) }
            first = false
            if item.name == ExchangeProcessor.samlField {
                out.writeString(ExchangeProcessor.samlField)
                out.writeInteger(UInt8(ascii: "="))
                encode(&out)
            } else {
                out.writeBytes(UnsafeRawBufferPointer(rebasing: body[item.pair]))
            }
        }
        return out
    }
}
