import SAMLEncoding
import SAMLVerification

extension RecordError {
    /// The batch tool's own codes, or the encoder's or verifier's code of the failure a record
    /// reports (so `malformed_xml` and `unknown_mvpd` are spelled once, by the verifier).
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The codes the batch tool adds to the encoder's and verifier's own; private, so a new
        /// one breaks no caller.
        private enum Base: String, Sendable {
            case unreadableInput = "unreadable_input"
            case truncatedGzip = "truncated_gzip"
            case corruptGzip = "corrupt_gzip"
            case trailingGzipData = "trailing_gzip_data"
            case skippedInput = "skipped_input"
            case invalidJSON = "invalid_json"
            case duplicateKey = "duplicate_key"
            case missingField = "missing_field"
            case recordTooLarge = "record_too_large"
            case harWithoutSAML = "har_without_saml"
            case outputFailed = "output_failed"
        }

        private enum Source: Hashable, Sendable {
            case batch(Base)
            case encoding(SAMLEncodingError.Code)
            case verification(VerificationError.Code)
        }

        private let source: Source

        private init(_ base: Base) { source = .batch(base) }

        package init(_ code: SAMLEncodingError.Code) { source = .encoding(code) }

        package init(_ code: VerificationError.Code) { source = .verification(code) }

        /// The wire form: the `code` of a failure line and of `--summary`'s counts.
        package var rawValue: String {
            switch source {
            case .batch(let base): base.rawValue
            case .encoding(let code): code.rawValue
            case .verification(let code): code.rawValue
            }
        }

        package var description: String { rawValue }

        /// An input file or directory cannot be opened or read.
        package static let unreadableInput = Code(.unreadableInput)
        /// A gzip stream ends before its end marker.
        package static let truncatedGzip = Code(.truncatedGzip)
        /// A gzip stream is damaged (bad header, checksum or data).
        package static let corruptGzip = Code(.corruptGzip)
        /// Bytes after the last gzip member that are neither another member nor zero padding.
        package static let trailingGzipData = Code(.trailingGzipData)
        /// An entry found in a directory input that is not read: a FIFO, socket or device, or a
        /// symbolic link to a directory.
        package static let skippedInput = Code(.skippedInput)
        /// A JSON Lines record or HAR file is not valid JSON.
        package static let invalidJSON = Code(.invalidJSON)
        /// A JSON object repeats a key (also when one copy is spelled with escapes), or a HAR
        /// form repeats `SAMLResponse` or `mvpd`: parsers disagree on which copy counts.
        package static let duplicateKey = Code(.duplicateKey)
        /// A JSON Lines record has no string field with the response (`--field`), or an
        /// exchange request in a HAR file carries no `SAMLResponse`.
        package static let missingField = Code(.missingField)
        /// A record is larger than `--max-record-bytes`.
        package static let recordTooLarge = Code(.recordTooLarge)
        /// A HAR file holds no request with a `SAMLResponse`.
        package static let harWithoutSAML = Code(.harWithoutSAML)
        /// An output (file, directory entry, standard output) cannot be written.
        package static let outputFailed = Code(.outputFailed)
    }
}
