import NIOCore

extension CookbookEncoder {
    /// Runs the cookbook on `input` and appends the result to `buffer`, growing it at most once.
    ///
    /// When `buffer` already has ``requiredCapacity(forInputCount:)`` writable bytes, the call
    /// allocates nothing.
    public static func encode(
        _ input: UnsafeRawBufferPointer, stage: CookbookStage = .encoded, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forInputCount: input.count)) {
            output in
            do throws(SAMLEncodingError) {
                return try encode(input, stage: stage, into: output)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Base64 and percent-encoding only, appended to `buffer`: for bytes already normalized (or
    /// deliberately left as they are), which normalizing again could change — the cookbook's
    /// rule is not idempotent (`"a \n b"` becomes `"a  b"`, then `"a b"`).
    public static func encodeWithoutNormalizing(_ input: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumEncodedCount(input.count)) { output in
            guard let dst = output.baseAddress else { return 0 }
            return encodeNormalized(input, into: dst)
        }
    }

    /// Encodes a document decoded from a value that arrived in `form` and appends it to `buffer`:
    /// normalized as ``WhitespaceNormalizer/normalizeValidating(_:decodedFrom:into:)`` decides (a
    /// document the cookbook already normalized is kept byte for byte), then base64 and
    /// percent-encoded.
    public static func encode(
        _ xml: UnsafeRawBufferPointer, decodedFrom form: SAMLForm, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forInputCount: xml.count)) { output in
            guard let dst = output.baseAddress else { return 0 }
            let scratch = UnsafeMutableRawBufferPointer(rebasing: output[maximumEncodedCount(xml.count)...])
            do throws(SAMLEncodingError) {
                guard let count = try WhitespaceNormalizer.normalizeValidating(xml, decodedFrom: form, into: scratch) else {
                    return encodeNormalized(xml, into: dst)
                }
                return encodeNormalized(UnsafeRawBufferPointer(rebasing: scratch[..<count]), into: dst)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Runs the cookbook on the readable bytes of `input` and appends the result to `buffer`.
    public static func encode(
        _ input: ByteBuffer, stage: CookbookStage = .encoded, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        input.withUnsafeReadableBytes { bytes in
            do throws(SAMLEncodingError) {
                try encode(bytes, stage: stage, into: &buffer)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
