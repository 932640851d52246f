/// The encoding core's codes (``SAMLEncodingError``). New codes may be added; existing ones never change.
extension ErrorCode {
    /// The input is not well-formed UTF-8 (the cookbook starts from a `String`, which cannot hold it).
    public static let invalidUTF8 = ErrorCode("invalid_utf8")
    /// A `%` not followed by two hexadecimal digits.
    public static let malformedPercentEncoding = ErrorCode("malformed_percent_encoding")
    /// A character outside the base64 alphabet, misplaced padding or a truncated quantum.
    public static let malformedBase64 = ErrorCode("malformed_base64")
    /// The value is neither raw XML, base64 of XML, nor the cookbook's encoded base64 of XML.
    public static let unrecognizedSAMLForm = ErrorCode("unrecognized_saml_form")
    /// The value was percent-encoded twice (`%252B`…); it is refused rather than guessed at.
    public static let doubleEncoded = ErrorCode("double_encoded")
}
