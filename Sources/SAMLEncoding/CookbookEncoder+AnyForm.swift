import NIOCore

extension CookbookEncoder {
    /// Bytes the output region of ``encodeAnyForm(_:into:)-(_,UnsafeMutableRawBufferPointer)``
    /// must hold for a value of `count` bytes.
    @inlinable
    public static func requiredCapacity(forAnyFormCount count: Int) -> Int {
        maximumEncodedCount(count + 3) + count + 3
    }

    /// Brings a `SAMLResponse` value in any ``SAMLForm`` to the cookbook's encoded form, encoding
    /// it exactly once: raw XML is encoded; base64 and encoded values are decoded, checked to be
    /// XML, normalized unless the cookbook's normalization already produced them, and encoded
    /// again (so a value produced by the cookbook comes out unchanged, and base64 of un-normalized
    /// XML comes out as the cookbook would have made it; see
    /// ``WhitespaceNormalizer/normalizeValidating(_:decodedFrom:into:)``).
    ///
    /// Returns the detected form and the number of bytes written to the front of `output`.
    public static func encodeAnyForm(
        _ value: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> (form: SAMLForm, count: Int) {
        precondition(output.count >= requiredCapacity(forAnyFormCount: value.count), "output buffer too small")
        let form = try SAMLForm.detect(value)
        if form == .raw {
            return (form, try encode(value, into: output))
        }
        guard let dst = output.baseAddress else { return (form, 0) }
        // Decode into scratch behind the largest possible result, then normalize in place there.
        let scratchStart = maximumEncodedCount(value.count + 3)
        let scratch = UnsafeMutableRawBufferPointer(rebasing: output[scratchStart...])
        let decoded = try CookbookDecoder.xml(of: value, form: form, scratch: scratch)
        // A document the cookbook's normalization already produced is kept: normalizing it again
        // could change it (the normalization is not idempotent).
        guard let normalizedCount = try WhitespaceNormalizer.normalizeValidating(decoded, decodedFrom: form, into: scratch) else {
            return (form, encodeNormalized(decoded, into: dst))
        }
        return (form, encodeNormalized(UnsafeRawBufferPointer(rebasing: scratch[..<normalizedCount]), into: dst))
    }

    /// Brings `value` to the cookbook's encoded form and appends it to `buffer`; returns the form
    /// it arrived in.
    @discardableResult
    public static func encodeAnyForm(
        _ value: UnsafeRawBufferPointer, into buffer: inout ByteBuffer
    ) throws(SAMLEncodingError) -> SAMLForm {
        var result: Result<SAMLForm, SAMLEncodingError> = .success(.raw)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: requiredCapacity(forAnyFormCount: value.count)) {
            output in
            do throws(SAMLEncodingError) {
                let (form, count) = try encodeAnyForm(value, into: output)
                result = .success(form)
                return count
            } catch {
                result = .failure(error)
                return 0
            }
        }
        return try result.get()
    }
}
