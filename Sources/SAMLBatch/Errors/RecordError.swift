import SAMLEncoding
import SAMLVerification

/// Why one batch record could not be encoded (or did not verify): a stable code and a message
/// that says what and where, without quoting SAML content. Two errors are equal when their codes
/// are.
package struct RecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s, so `RecordError.Code.truncatedGzip` names a batch code too.
    package typealias Code = ErrorCode

    /// The batch tool's own code (declared below), or the encoder's or verifier's code
    /// of the failure it reports, taken as it is.
    package var code: ErrorCode
    package var message: String
    /// The encoder's or verifier's error this one reports, when it reports one.
    package var underlying: (any Error & Sendable)?

    package init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    package init(_ error: SAMLEncodingError) {
        code = error.code
        message = error.message
        underlying = error
    }

    package init(_ error: VerificationError) {
        code = error.code
        message = error.message
        underlying = error
    }

    package var description: String { "\(code.rawValue): \(message)" }

    package static func == (lhs: RecordError, rhs: RecordError) -> Bool { lhs.code == rhs.code }

    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

// MARK: - The batch tool's own codes

/// The batch tool's own codes (``RecordError``). A record that fails in the encoder or the
/// verifier carries that failure's code (`malformed_xml` and `unknown_mvpd` are the
/// verifier's), so these are only what the batch tool adds.
extension ErrorCode {
    /// An input file or directory cannot be opened or read.
    package static let unreadableInput = ErrorCode("unreadable_input")
    /// A gzip stream ends before its end marker.
    package static let truncatedGzip = ErrorCode("truncated_gzip")
    /// A gzip stream is damaged (bad header, checksum or data).
    package static let corruptGzip = ErrorCode("corrupt_gzip")
    /// Bytes after the last gzip member that are neither another member nor zero padding.
    package static let trailingGzipData = ErrorCode("trailing_gzip_data")
    /// An entry found in a directory input that is not read: a FIFO, socket or device, or a
    /// symbolic link to a directory.
    package static let skippedInput = ErrorCode("skipped_input")
    /// A JSON Lines record or HAR file is not valid JSON.
    package static let invalidJSON = ErrorCode("invalid_json")
    /// A JSON object repeats a key (also when one copy is spelled with escapes), or a HAR
    /// form repeats `SAMLResponse` or `mvpd`: parsers disagree on which copy counts.
    package static let duplicateKey = ErrorCode("duplicate_key")
    /// A JSON Lines record has no string field with the response (`--field`), or an
    /// exchange request in a HAR file carries no `SAMLResponse`.
    package static let missingField = ErrorCode("missing_field")
    /// A record is larger than `--max-record-bytes`.
    package static let recordTooLarge = ErrorCode("record_too_large")
    /// A HAR file holds no request with a `SAMLResponse`.
    package static let harWithoutSAML = ErrorCode("har_without_saml")
    /// An output (file, directory entry, standard output) cannot be written.
    package static let outputFailed = ErrorCode("output_failed")
}
