import SAMLEncoding
import SAMLVerification

/// Why one batch record could not be encoded (or did not verify): a stable code and a message
/// that says what and where, without quoting SAML content. Two errors are equal when their codes
/// are.
package struct RecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s; `RecordError.Code.truncatedGzip` reads as before.
    package typealias Code = ErrorCode

    /// The batch tool's own code (`ErrorCode+Batch.swift`), or the encoder's or verifier's code
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
