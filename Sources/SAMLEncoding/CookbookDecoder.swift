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

// MARK: - From a `SAMLResponse` value to XML

extension CookbookDecoder {
    /// The XML document a `SAMLResponse` value in `form` stands for: the value itself when it is
    /// raw, otherwise its decoding into `scratch`, which must start like XML. The one place
    /// that rule lives (the any-form encoder, the gateway and the batch tool all need it).
    ///
    /// - Throws: `malformed_percent_encoding`, `malformed_base64`, or `unrecognized_saml_form`
    ///   when the decoding is not XML.
    /// - Precondition: `scratch` satisfies ``decode(_:into:)-(_,UnsafeMutableRawBufferPointer)``;
    ///   it may be the value's own memory (decoding in place).
    public static func xml(
        of value: UnsafeRawBufferPointer, form: SAMLForm, scratch: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> UnsafeRawBufferPointer {
        if form == .raw { return value }
        let count = try decode(value, into: scratch)
        let xml = UnsafeRawBufferPointer(rebasing: scratch[..<count])
        guard SAMLForm.startsLikeXML(xml) else {
            throw SAMLEncodingError(.unrecognizedSAMLForm, "the value is \(form.rawValue) but does not decode to XML")
        }
        return xml
    }

    /// The XML document a `SAMLResponse` value stands for, and the form it arrived in: the form
    /// is detected (``SAMLForm/detect(_:)``), surrounding whitespace is trimmed from a base64 or
    /// encoded value when `trimmingWhitespace`, and the value is decoded with
    /// ``xml(of:form:scratch:)``. What the gateway, `samlgate verify` and the batch tool each do
    /// to a value before it is a document.
    ///
    /// - Parameters:
    ///   - value: the value's bytes after whatever decoding its carrier needs (the one
    ///     form-decoding of a request body, a JSON string's unescaping); a file's bytes as read.
    ///   - trimmingWhitespace: drop XML whitespace (`UInt8.isXMLWhitespace`: space, tab,
    ///     CR, LF) at both ends of a base64 or encoded value before decoding it: `true` for a file
    ///     or a record, whose last newline is no part of the value; `false` for a form field,
    ///     which has exact bounds (a space at its ends is a `+` the client left unescaped, refused
    ///     as `malformed_base64`). Raw XML is never trimmed here: it is the document as sent, and
    ///     the cookbook's normalization trims it.
    ///   - scratch: where a base64 or encoded value is decoded to, at least `value.count + 3`
    ///     bytes. `value` may lie in `scratch`, starting at or after its start (decoding in place:
    ///     the decoders never write ahead of what they read), so a caller that form-decodes a
    ///     field into `scratch` decodes it to XML there with no further copy.
    /// - Returns: `xml` is `value` itself for raw XML (untrimmed), otherwise the decoding at the
    ///   front of `scratch`; `form` is the form detected.
    /// - Throws: what ``SAMLForm/detect(_:)`` throws (`unrecognized_saml_form`, `double_encoded`,
    ///   `malformed_percent_encoding`), then what ``xml(of:form:scratch:)`` throws
    ///   (`malformed_percent_encoding` or `malformed_base64`, their offsets in the trimmed value;
    ///   `unrecognized_saml_form` when the decoding is not XML). A caller that needs the form of a
    ///   value that failed to decode calls ``SAMLForm/detect(_:)`` again: it succeeds exactly when
    ///   the failure came after detection.
    public static func xml(
        detectingFormOf value: UnsafeRawBufferPointer, trimmingWhitespace: Bool, scratch: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> (xml: UnsafeRawBufferPointer, form: SAMLForm) {
        precondition(scratch.count >= value.count + 3, "scratch buffer too small")
        let form = try SAMLForm.detect(value)
        var start = 0
        var end = value.count
        if form != .raw && trimmingWhitespace {
            while start < end, value[start].isXMLWhitespace { start += 1 }
            while end > start, value[end - 1].isXMLWhitespace { end -= 1 }
        }
        let trimmed = UnsafeRawBufferPointer(rebasing: value[start..<end])
        return (try xml(of: trimmed, form: form, scratch: scratch), form)
    }
}
