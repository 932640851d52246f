/// Why a SAML response was not accepted.
///
/// Shaped like swift-nio's `FileSystemError`: a stable machine-readable ``code`` (used in HTTP
/// error bodies, CLI output, metrics labels and tests), a human ``message`` and the HTTP status
/// class it maps to. New codes can be added without breaking callers, so match on the named
/// constants of ``Code`` and keep a default branch.
///
/// Messages never contain SAML content, NameIDs or attribute values: only structural facts,
/// algorithm URIs, status codes and library diagnostics, so they are safe to log.
public struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code, e.g. ``Code/signatureInvalid`` (`"signature_invalid"`).
    public var code: Code
    /// A short explanation for operators; safe to log.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `true` when the response was well formed but cannot be trusted (answer 401);
    /// `false` when the input itself is unacceptable (answer 400) or the server failed (500).
    public var isTrustFailure: Bool { code.isTrustFailure }

    /// The HTTP status this error maps to: 401 for trust failures, 400 for malformed input,
    /// 500 for ``Code/internalError``, 503 for ``Code/replayCacheFull`` (retry later) and
    /// ``Code/metadataExpired`` and ``Code/metadataUnavailable`` (the gateway's trust, not the
    /// response, is at fault).
    public var httpStatus: Int {
        if code == .internalError { return 500 }
        if code == .replayCacheFull || code == .metadataExpired || code == .metadataUnavailable { return 503 }
        return code.isTrustFailure ? 401 : 400
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
