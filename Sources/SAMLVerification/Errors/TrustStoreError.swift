import SAMLEncoding

/// A trust store, or one of its files, could not be loaded (missing directory, unreadable or
/// invalid PEM, malformed metadata, an aggregate entity the mapping names but the file lacks).
///
/// Shaped like ``VerificationError``: a stable ``code`` for logs, the CLI and `samlgate trust
/// list`, and a message that names the file. A store that fails to load is never half used: the
/// gateway refuses to start, and a reload keeps the previous snapshot.
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s (this module's in `ErrorCode+TrustStore.swift`).
    public typealias Code = ErrorCode

    public var code: ErrorCode
    public var message: String

    /// An error of the general kind ``ErrorCode/trustStoreInvalid``.
    public init(_ message: String) {
        self.init(.trustStoreInvalid, message)
    }

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
