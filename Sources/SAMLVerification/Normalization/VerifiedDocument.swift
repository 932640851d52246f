// A response verified as it is forwarded: the unverified document and its cookbook
// normalization, the verified document, and how the verdict relates to the normalization.

import NIOCore
import SAMLEncoding

// MARK: - UnverifiedDocument

/// A response decoded to XML and normalized the cookbook's way, not verified yet: what
/// ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)`` turns into a
/// ``VerifiedDocument`` or refuses (the unverified half of swift-certificates'
/// `UnverifiedCertificateChain` → `ValidatedCertificateChain`).
///
/// Normalization is done here, before verification, because its failure (`invalid_utf8`) is a
/// verdict on the encoding, reported before any verification error, as the cookbook's own code
/// would fail on it.
///
/// **Decoding comes before.** The XML given is what the caller decoded, untouched here.
/// `samlgate verify` and the batch tool read files and records, whose surrounding ASCII
/// whitespace (a file's last newline) is no part of a base64 or encoded value: they trim it
/// before decoding. The gateway decodes the `SAMLResponse` form field exactly as sent: a form
/// field has exact bounds, and a space at its ends is a `+` the client left unescaped, refused
/// as `malformed_base64` rather than guessed away. Line breaks inside base64 are skipped by the
/// decoder in all three.
///
/// **Storage.** The original document in the caller's array (no copy), and the normalized one
/// in one array of its own — for raw XML always, for a value that arrived base64 or encoded
/// only when it is not already a result of the cookbook's normalization (then it is kept byte
/// for byte and costs no allocation).
public struct UnverifiedDocument: Sendable {
    /// The document as decoded.
    let original: [UInt8]
    /// Its cookbook normalization, `nil` when that is `original` itself.
    let normalized: [UInt8]?

    /// Normalizes `xml`, decoded from a value that arrived in `form`, as
    /// ``WhitespaceNormalizer/normalizeValidating(_:decodedFrom:into:)`` decides: raw XML always,
    /// a base64 or encoded value unless the cookbook's normalization already produced it
    /// (normalizing again could change its bytes: the rule is not idempotent).
    ///
    /// - Throws: `invalid_utf8` with the offset of the first ill-formed sequence.
    public init(_ xml: [UInt8], decodedFrom form: SAMLForm) throws(SAMLEncodingError) {
        let normalization: Result<[UInt8]?, SAMLEncodingError> = xml.withUnsafeBytes { input in
            Result { () throws(SAMLEncodingError) -> [UInt8]? in
                if try WhitespaceNormalizer.keepsValidating(input, decodedFrom: form) { return nil }
                // Never longer than the input: one allocation of the input's size.
                var failure: SAMLEncodingError?
                let normalized = [UInt8](unsafeUninitializedCapacity: input.count) { output, count in
                    do throws(SAMLEncodingError) {
                        count = try WhitespaceNormalizer.normalizeValidating(input, into: UnsafeMutableRawBufferPointer(output))
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
                return normalized
            }
        }
        self.original = xml
        self.normalized = try normalization.get()
    }

    /// Calls `body` with the document's cookbook normalization, verified or not: what the value
    /// encodes to in the `cookbook` form. The batch tool writes every record's encoding, also a
    /// record that does not verify, and takes it from here rather than normalizing twice.
    public func withNormalizedBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        (normalized ?? original).withUnsafeBytes(body)
    }
}

// MARK: - VerifiedDocument

/// A response verified **as it is forwarded**: the verified facts, and exactly the bytes the
/// verdict covers — the only bytes it can encode.
///
/// Only ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)`` creates one
/// (the validated half of swift-certificates' unverified → validated chain types), so code that
/// holds a `VerifiedDocument` cannot forward another document than the one verified: a
/// transformation applied after verification (normalizing again, re-serialising) could turn
/// text into markup. ``bytes`` are the cookbook normalization of the response (``normalization``
/// `unchanged`, `verified` or `equivalent`), or, with the signature-preserving fallback, the
/// original as decoded (`original`).
///
/// Contains personal data (through ``response`` and ``bytes``): never log it.
public struct VerifiedDocument: Sendable {
    /// What the verified document says (identity, issuer, validity, key, replay claim).
    public let response: VerifiedResponse
    /// Which document ``bytes`` are, and whether the IdP's signature survived normalization.
    public let normalization: NormalizationOutcome
    /// Exactly the bytes verified (or, for ``NormalizationOutcome/equivalent``, proven the same
    /// tree as the verified original and read for ``response``): the XML to forward.
    public let bytes: [UInt8]

    init(response: VerifiedResponse, normalization: NormalizationOutcome, bytes: [UInt8]) {
        self.response = response
        self.normalization = normalization
        self.bytes = bytes
    }

    /// The most bytes ``encode(into:)`` appends: for sizing the buffer the encoding goes into.
    public var maximumEncodedCount: Int { CookbookEncoder.maximumEncodedCount(bytes.count) }

    /// Appends ``bytes`` base64- and percent-encoded the cookbook's way, **without normalizing
    /// them again** (the normalization is not idempotent: `"a \n b"` becomes `"a  b"`, then
    /// `"a b"`), so the value decodes to exactly what was verified. Grows `buffer` at most once,
    /// not at all when it has ``maximumEncodedCount`` writable bytes.
    public func encode(into buffer: inout ByteBuffer) {
        bytes.withUnsafeBytes { CookbookEncoder.encodeWithoutNormalizing($0, into: &buffer) }
    }
}

// MARK: - NormalizationOutcome

/// How the document a verdict covers relates to the cookbook's normalization of the response
/// (see ``Verifier/verifyForForwarding(_:fallback:mvpd:now:expectedInResponseTo:)``).
public enum NormalizationOutcome: String, Sendable {
    /// Normalization changes no byte: there is one document, and it verified.
    case unchanged
    /// The normalized document verified on its own.
    case verified
    /// The signature does not survive normalization, the original verified, and the normalized
    /// document parses to the same tree (only whitespace in text differs): the normalized one
    /// is forwarded, its identity read from it.
    case equivalent
    /// The signature does not survive normalization and the original, verified, is forwarded
    /// as it is (``NormalizationFallback/original``).
    case original

    /// Which bytes the verdict covers and the caller forwards.
    public var forwardsOriginal: Bool { self == .original }

    /// Whether the IdP's signature verifies on the normalized document itself.
    public var signatureSurvives: Bool { self == .unchanged || self == .verified }
}

// MARK: - NormalizationFallback

/// What a verification for forwarding does when the IdP's signature verifies on the original
/// document but not on its cookbook normalization.
public enum NormalizationFallback: Sendable {
    /// Forward the normalized document only when it parses to the same tree as the verified
    /// original (``DocumentEquivalence``); otherwise refuse with `normalization_changes_document`.
    case equivalentTree
    /// Forward the original, verified document without normalization.
    case original
}
