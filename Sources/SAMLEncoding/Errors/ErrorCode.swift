/// The stable, machine-readable reason of a samlgate failure: the `code` of an HTTP error's
/// `details` and of a batch failure line, the `code` label of the metrics, what tests compare.
///
/// One type for every module's codes (the shape of swift-certificates' `ErrorCode`): a named
/// constant per code, two codes equal when their wire forms are. Each module declares its own
/// codes as `static let` in an extension in its `Errors/` folder (`ErrorCode+Encoding.swift`
/// here; `+Verification`, `+TrustStore`, `+Gateway`, `+Batch` in theirs), so an error that
/// reports another module's failure takes that failure's code as it is: `unknown_mvpd` is
/// spelled once, by the verifier, and the gateway's refusal and the batch tool's failure line
/// carry that very constant. A name is declared once across the modules (the verifier's
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

    /// For the `static let` declarations of the `ErrorCode+…` extensions only.
    package init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
