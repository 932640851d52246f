import SAMLEncoding
import SAMLVerification

/// Why one batch record could not be encoded (or did not verify): a stable code and a message
/// that says what and where, without quoting SAML content. Two errors are equal when their codes
/// are.
public struct RecordError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Code
    public var message: String
    /// The encoder's or verifier's error this one reports, when it reports one.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: SAMLEncodingError) {
        code = Code(error.code)
        message = error.message
        underlying = error
    }

    public init(_ error: VerificationError) {
        code = Code(error.code)
        message = error.message
        underlying = error
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func == (lhs: RecordError, rhs: RecordError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
