import SAMLEncoding
import SAMLVerification

/// Why one batch record could not be encoded (or did not verify): a stable code and a message
/// that says what and where, without quoting SAML content.
public struct RecordError: Error, Sendable, Hashable {
    public var code: String
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code.rawValue
        self.message = message
    }

    init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: SAMLEncodingError) {
        code = error.code.rawValue
        message = error.message
    }

    public init(_ error: VerificationError) {
        code = error.code.rawValue
        message = error.message
    }

    /// The codes the batch tool adds to the encoder's and verifier's own.
    public enum Code: String, Sendable, CaseIterable {
        /// An input file or directory cannot be opened or read.
        case unreadableInput = "unreadable_input"
        /// A gzip stream ends before its end marker.
        case truncatedGzip = "truncated_gzip"
        /// A gzip stream is damaged (bad header, checksum or data).
        case corruptGzip = "corrupt_gzip"
        /// Bytes after the last gzip member that are neither another member nor zero padding.
        case trailingGzipData = "trailing_gzip_data"
        /// An entry found in a directory input that is not read: a FIFO, socket or device, or a
        /// symbolic link to a directory.
        case skippedInput = "skipped_input"
        /// A JSON Lines record or HAR file is not valid JSON.
        case invalidJSON = "invalid_json"
        /// A JSON object repeats a key (also when one copy is spelled with escapes), or a HAR
        /// form repeats `SAMLResponse` or `mvpd`: parsers disagree on which copy counts.
        case duplicateKey = "duplicate_key"
        /// A JSON Lines record has no string field with the response (`--field`), or an
        /// exchange request in a HAR file carries no `SAMLResponse`.
        case missingField = "missing_field"
        /// A record is larger than `--max-record-bytes`.
        case recordTooLarge = "record_too_large"
        /// A HAR file holds no request with a `SAMLResponse`.
        case harWithoutSAML = "har_without_saml"
        /// The value decodes to text that is not well-formed XML (truncated, unbalanced tags).
        case malformedXML = "malformed_xml"
        /// An output (file, directory entry, standard output) cannot be written.
        case outputFailed = "output_failed"
        /// `--verify` with a trust store of several MVPDs and a record that names none.
        case mvpdUnknown = "unknown_mvpd"
    }
}
