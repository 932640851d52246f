import Dispatch
import Foundation
import NIOCore
import SAMLEncoding
import SAMLVerification

/// The SAML work of a token exchange, run on a worker thread: parse the form, check the fields,
/// bring `SAMLResponse` to XML whatever form it came in, normalize it the cookbook's way, verify
/// the document that will be forwarded for the MVPD, base64- and percent-encode exactly those
/// bytes, and build the body to forward.
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
    static let v1Required = ["requestor", "deviceId", "mvpd", "deviceType", samlField]
    /// Fields whose second copy could make us verify one value and the backend read another.
    /// Each with its key, the lower-case bytes a spelling of it folds to (see ``FormBody/parse(_:unique:)``).
    static let uniqueFields: [(key: [UInt8], name: String)] =
        ["requestor", "deviceId", "mvpd", "deviceType", samlField, "deviceUser", "appId"].map { (Array($0.lowercased().utf8), $0) }
    static let deviceTypes: Set<String> = ["iOS", "tvOS"]

    public init(trustStore: ReloadableTrustStore, options: VerificationOptions, replayCache: (any ReplayCache)?, forwardForm: ForwardForm) {
        self.trustStore = trustStore
        self.options = options
        self.replayCache = replayCache
        self.forwardForm = forwardForm
    }

    /// - Parameter store: the trust snapshot of this request (the one the v2 partner status was
    ///   resolved against); the current one when `nil`.
    public func prepare(
        body: ByteBuffer, route: ExchangeRoute, store: TrustStore? = nil, now: Date = Date()
    )
        -> Result<PreparedExchange, ExchangeRefusal>
    {
        let store = store ?? trustStore.current
        var named: String?
        return body.withUnsafeReadableBytes { bytes in
            Result { () throws(ExchangeRefusal) in
                do throws(GatewayError) {
                    return try prepare(bytes, route: route, store: store, now: now, named: &named)
                } catch {
                    // Report-only, and nothing of the document could be encoded: the client's body as it came.
                    guard reporting(named, in: store) else { throw ExchangeRefusal(error: error, mvpd: named) }
                    return .reported(body, refusal: error, mvpd: named ?? GatewayMetrics.unknownMVPD, form: .raw)
                }
            }
        }
    }

    /// Whether the verdicts for `mvpd` are reported rather than enforced: its `mode` file, else
    /// the gateway's `mode`. A request that names no MVPD of the store (its fields unreadable,
    /// the `mvpd` field missing or unknown) could be meant for any of them: reported only when
    /// the gateway is report-only and no MVPD is enforced by its own `mode` file — else a
    /// malformed request would be a way past an enforced MVPD.
    func reporting(_ mvpd: String?, in store: TrustStore) -> Bool {
        if let mvpd, let provider = store.provider(for: mvpd) { return (provider.mode ?? mode) == .reportOnly }
        return mode == .reportOnly && !store.providers.values.contains { $0.mode == .enforce }
    }

    /// - Parameter named: set to the MVPD as soon as it is one of the trust store's.
    func prepare(
        _ body: UnsafeRawBufferPointer, route: ExchangeRoute, store: TrustStore, now: Date, named: inout String?
    ) throws(GatewayError) -> PreparedExchange {
        let start = DispatchTime.now().uptimeNanoseconds
        // v2: the partner status named the MVPD before the body was read.
        if case .v2(let partner) = route { named = partner }
        let fields = try FormBody.parse(body, unique: Self.uniqueFields)
        func field(_ name: String) -> FormField? { fields.first { $0.name == name } }
        func text(_ name: String) throws(GatewayError) -> String {
            guard let found = field(name) else { throw GatewayError.missingParameter(name) }
            return try FormBody.decodeText(UnsafeRawBufferPointer(rebasing: body[found.value]), field: name)
        }

        let mvpd: String
        switch route {
        case .v1:
            // Named as soon as the field is readable, so that the MVPD's mode decides for the
            // refusals of the other fields too.
            if field("mvpd") != nil, let claimed = try? text("mvpd"), store.provider(for: claimed) != nil { named = claimed }
            for name in Self.v1Required where (field(name)?.value.isEmpty ?? true) {
                throw GatewayError.missingParameter(name)
            }
            let deviceType = try text("deviceType")
            guard Self.deviceTypes.contains(deviceType) else {
                throw GatewayError.invalidParameter("deviceType", "must be iOS or tvOS")
            }
            mvpd = try text("mvpd")
            guard store.provider(for: mvpd) != nil else {
                throw GatewayError(
                    status: 400, code: .unknownMVPD, message: "no trust configuration for this MVPD",
                    details: [("parameter", .string("mvpd"))])
            }
        case .v2(let partner):
            mvpd = partner
        }
        named = mvpd
        guard let saml = field(Self.samlField), !saml.value.isEmpty else {
            throw GatewayError.missingParameter(Self.samlField)
        }

        let (xml, form) = try Self.decodeSAMLResponse(UnsafeRawBufferPointer(rebasing: body[saml.value]))
        let parsed = DispatchTime.now().uptimeNanoseconds

        // The cookbook's normalization comes first, then the verdict on the document forwarded
        // (see ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``).
        let unverified: UnverifiedDocument
        do throws(SAMLEncodingError) {
            unverified = try UnverifiedDocument(xml, decodedFrom: form)
        } catch {
            throw GatewayError(error, parameter: Self.samlField)
        }
        let verifier = Verifier(trustStore: store, options: options, replayCache: replayCache)
        let verified: VerifiedDocument
        do throws(VerificationError) {
            verified = try verifier.verifyForForwarding(
                unverified,
                fallback: store.provider(for: mvpd)?.policy.forwardForm ?? (forwardForm == .signaturePreserving ? .original : .equivalentTree),
                mvpd: mvpd, now: now)
        } catch {
            guard reporting(mvpd, in: store) else { throw GatewayError(error) }
            // Report-only: forwarded as enforcing would have forwarded a valid one, encoded once
            // the cookbook's way from the normalized document.
            let checked = DispatchTime.now().uptimeNanoseconds
            let out = unverified.withNormalizedBytes { normalized in
                Self.upstreamBody(fields, body, capacity: CookbookEncoder.maximumEncodedCount(normalized.count)) {
                    CookbookEncoder.encodeWithoutNormalizing(normalized, into: &$0)
                }
            }
            return .reported(
                out, refusal: GatewayError(error), mvpd: mvpd, form: form, parseNanos: parsed - start, verifyNanos: checked - parsed,
                encodeNanos: DispatchTime.now().uptimeNanoseconds - checked)
        }
        let checked = DispatchTime.now().uptimeNanoseconds

        let out = Self.upstreamBody(fields, body, capacity: verified.maximumEncodedCount) { verified.encode(into: &$0) }
        let encoded = DispatchTime.now().uptimeNanoseconds
        let (assertionHash, subjectHMAC) = audit?.facts(of: verified.response) ?? (nil, nil)
        return PreparedExchange(
            upstreamBody: out, mvpd: mvpd, form: form, normalization: verified.normalization,
            keyFingerprint: verified.response.keyFingerprint, replayClaim: verified.response.replayClaim, parseNanos: parsed - start,
            verifyNanos: checked - parsed, encodeNanos: encoded - checked, assertionHash: assertionHash, subjectHMAC: subjectHMAC)
    }

    /// The body for the upstream: the client's fields byte for byte, `SAMLResponse`'s value
    /// written by `encode` (at most `capacity` bytes).
    private static func upstreamBody(
        _ fields: [FormField], _ body: UnsafeRawBufferPointer, capacity: Int, encode: (inout ByteBuffer) -> Void
    ) -> ByteBuffer {
        var out = ByteBufferAllocator().buffer(capacity: body.count + capacity + 16)
        var first = true
        for item in fields {
            if !first { out.writeInteger(UInt8(ascii: "&")) }
            first = false
            if item.name == samlField {
                out.writeString(samlField)
                out.writeInteger(UInt8(ascii: "="))
                encode(&out)
            } else {
                out.writeBytes(UnsafeRawBufferPointer(rebasing: body[item.pair]))
            }
        }
        return out
    }

    /// `SAMLResponse` form-decoded, then (base64 and encoded forms) decoded to XML in place, in
    /// one array: the request's only copy of the document, encoded from directly when it is
    /// forwarded as decoded (already the cookbook's normalization, or the signature-preserving
    /// fallback); normalization, when it changes anything, writes one more.
    private static func decodeSAMLResponse(_ field: UnsafeRawBufferPointer) throws(GatewayError) -> (xml: [UInt8], form: SAMLForm) {
        var outcome: Result<SAMLForm, GatewayError> = .success(.raw)
        let xml = [UInt8](unsafeUninitializedCapacity: field.count + 4) { storage, count in
            outcome = Result { () throws(GatewayError) in
                let scratch = UnsafeMutableRawBufferPointer(storage)
                let value = UnsafeRawBufferPointer(rebasing: scratch[..<(try FormBody.decode(field, into: scratch, field: samlField))])
                do throws(SAMLEncodingError) {
                    let form = try SAMLForm.detect(value)
                    // The value itself, or its decoding written from the front of `scratch`.
                    let decoded = try CookbookDecoder.xml(of: value, form: form, scratch: scratch)
                    assert(decoded.baseAddress == UnsafeRawPointer(scratch.baseAddress), "the XML starts at the front")
                    count = decoded.count
                    return form
                } catch {
                    throw GatewayError(error, parameter: samlField)
                }
            }
        }
        return (xml, try outcome.get())
    }
}
