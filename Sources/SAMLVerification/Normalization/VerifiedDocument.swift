import NIOCore
import SAMLEncoding

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
