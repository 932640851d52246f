// What the errors of every samlgate module share (the stable `ErrorCode`, the `ErrorLocation`
// of a debug description), and the encoding core's own codes and error.

/// The stable, machine-readable reason of a samlgate failure: the `code` of an HTTP error's
/// `details` and of a batch failure line, the `code` label of the metrics, what tests compare.
///
/// One type for every module's codes (the shape of swift-certificates' `ErrorCode`): a named
/// constant per code, two codes equal when their wire forms are. Each module declares its own
/// codes as `static let` in an extension in its `Errors/` folder (this module's below, beside
/// ``SAMLEncodingError``; the verifier's, the trust store's, the gateway's and the batch tool's
/// in theirs), so an error that reports another module's failure takes that failure's code as
/// it is: `unknown_mvpd` is spelled once, by the verifier, and the gateway's refusal and the
/// batch tool's failure line carry that very constant. A name is declared once across the modules (the verifier's
/// `metadataExpired` is also the trust store's).
///
/// It lives in SAMLEncoding, beside ``ErrorLocation``, because this is the lowest module that
/// every module with codes imports already (SAMLVerification, SAMLBatch and Gateway build on
/// it) and its own ``SAMLEncodingError`` needs it. A target of its own would hold this one
/// struct, would have to become a product as well (the libraries' public errors name it), and
/// would add an import everywhere for nothing.
///
/// Only samlgate's modules make codes (the initialiser is `package`), and only as those named
/// constants, which scripts/check_docs.py reads to check docs/errors.md. A caller compares with
/// the constants and keeps a default branch, so a new code breaks no one.
public struct ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The wire form (`"signature_invalid"`), as HTTP error bodies, logs and metric labels show it.
    public let rawValue: String

    /// For the `static let` declarations of the modules' `ErrorCode` extensions only.
    package init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

/// Where in samlgate's own sources an error was raised (`#fileID` and `#line`), for the people
/// reading a debug description: never part of a code, a message or an HTTP body.
public struct ErrorLocation: Sendable, CustomStringConvertible {
    public let fileID: String
    public let line: Int

    public init(fileID: String, line: Int) {
        self.fileID = fileID
        self.line = line
    }

    public var description: String { "\(fileID):\(line)" }
}

// MARK: - The encoding core's codes and error

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

/// A failure of the encoding core: a stable ``ErrorCode`` for machines and a message for people.
///
/// The code is what HTTP error bodies, CLI output, metric labels and tests use; the message may
/// change between releases. `offset`, when set, is the byte offset in the input where the problem
/// was found, so an operator can locate it in a capture.
public struct SAMLEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s (this module's are declared just above).
    public typealias Code = ErrorCode

    /// The stable, machine-readable reason.
    public var code: ErrorCode
    /// A human-readable explanation, never containing the input's content.
    public var message: String
    /// Byte offset of the first offending byte in the input, when the problem has a location.
    public var offset: Int?
    /// Where the error was raised.
    public var location: ErrorLocation

    public init(_ code: ErrorCode, _ message: String, offset: Int? = nil, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.offset = offset
        self.location = ErrorLocation(fileID: fileID, line: line)
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var debugDescription: String { "\(code.rawValue): \(message) (\(location))" }

    public static func == (lhs: SAMLEncodingError, rhs: SAMLEncodingError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
