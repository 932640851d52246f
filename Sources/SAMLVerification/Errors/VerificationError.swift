import SAMLEncoding

/// Why a SAML response was not accepted.
///
/// Shaped like swift-nio's `FileSystemError`: a stable machine-readable ``code`` (used in HTTP
/// error bodies, CLI output, metrics labels and tests), a human ``message`` and where it was
/// raised. Two errors are equal when their codes are: the message is for people and may change.
/// New codes can be added without breaking callers, so match on the named constants of
/// ``ErrorCode`` (this module's in `ErrorCode+Verification.swift`) and keep a default branch. Which HTTP status a code answers is the gateway's business, not
/// the verifier's.
///
/// Messages never contain SAML content, NameIDs or attribute values: only structural facts,
/// algorithm URIs, status codes and library diagnostics, so they are safe to log.
public struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The codes are ``ErrorCode``'s; `VerificationError.Code.signatureInvalid` reads as before.
    public typealias Code = ErrorCode

    /// The stable code, e.g. ``ErrorCode/signatureInvalid`` (`"signature_invalid"`).
    public var code: ErrorCode
    /// A short explanation for operators; safe to log.
    public var message: String
    /// Where the error was raised.
    public var location: ErrorLocation

    public init(_ code: ErrorCode, _ message: String, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.location = ErrorLocation(fileID: fileID, line: line)
    }

    /// `true` when the response was well formed but cannot be trusted (forged, tampered,
    /// replayed, out of date); `false` when the input itself is unacceptable or the verifier's
    /// own side (trust, cache, libraries) failed.
    public var isTrustFailure: Bool {
        switch code {
        case .forbiddenDTD, .forbiddenMarkup, .tooLarge, .tooDeep, .tooManyAttributes, .tooManyNamespaces, .tooManyNodes, .malformedXML,
            .unsupportedEncryptedAssertion,
            .unknownMVPD, .internalError, .replayCacheFull, .metadataExpired, .metadataUnavailable:
            return false
        default:
            return true
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var debugDescription: String { "\(code.rawValue): \(message) (\(location))" }

    public static func == (lhs: VerificationError, rhs: VerificationError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
