extension SAMLEncodingError {
    /// Stable error codes of the encoding core. New codes may be added; existing ones never change.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The codes themselves, private so that a new one breaks no caller: callers compare with
        /// the named constants below and keep a default branch (as swift-nio's `FileSystemError.Code`).
        private enum Base: String, Sendable {
            case invalidUTF8 = "invalid_utf8"
            case malformedPercentEncoding = "malformed_percent_encoding"
            case malformedBase64 = "malformed_base64"
            case unrecognizedSAMLForm = "unrecognized_saml_form"
            case doubleEncoded = "double_encoded"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The wire form (`"invalid_utf8"`), as HTTP error bodies, logs and metric labels show it.
        public var rawValue: String { base.rawValue }

        public var description: String { base.rawValue }

        /// The input is not well-formed UTF-8 (the cookbook starts from a `String`, which cannot hold it).
        public static let invalidUTF8 = Code(.invalidUTF8)
        /// A `%` not followed by two hexadecimal digits.
        public static let malformedPercentEncoding = Code(.malformedPercentEncoding)
        /// A character outside the base64 alphabet, misplaced padding or a truncated quantum.
        public static let malformedBase64 = Code(.malformedBase64)
        /// The value is neither raw XML, base64 of XML, nor the cookbook's encoded base64 of XML.
        public static let unrecognizedSAMLForm = Code(.unrecognizedSAMLForm)
        /// The value was percent-encoded twice (`%252B`…); it is refused rather than guessed at.
        public static let doubleEncoded = Code(.doubleEncoded)
    }
}
