import SAMLEncoding

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
