import NIOCore

/// The inverse of the cookbook's last two steps: percent-decode, then base64-decode.
///
/// Whitespace normalization cannot be undone, so `decode(encode(x))` is the normalized `x`.
public enum CookbookDecoder {
    /// Decodes `input` into `output` and returns the number of bytes written.
    ///
    /// - Throws: `malformed_percent_encoding` or `malformed_base64`, with the offset (in the
    ///   percent-decoded text for base64 errors).
    /// - Precondition: `output.count >= input.count`; `output` may be `input` itself.
    public static func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> Int {
        precondition(output.count >= input.count, "output buffer too small")
        let unescaped = try PercentEncoding.decode(input, into: output)
        let text = UnsafeRawBufferPointer(rebasing: output[..<unescaped])
        // Base64 decoding in place: three bytes out for every four in, never overtaking the input.
        return try Base64.decode(
            text, into: UnsafeMutableRawBufferPointer(rebasing: output[..<max(unescaped, Base64.maximumDecodedCount(unescaped))]))
    }

    /// Decodes `input` and appends the result to `buffer`.
    public static func decode(_ input: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) throws(SAMLEncodingError) {
        var failure: SAMLEncodingError?
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: input.count + 3) { output in
            do throws(SAMLEncodingError) {
                return try decode(input, into: output)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }
}
