import SAMLEncoding

/// The codes only the command line reports (`samlgate: <input>: <code>: <message>` on standard
/// error). An input it cannot read is the batch tool's ``ErrorCode/unreadableInput``, one over
/// the size limit the verifier's ``ErrorCode/tooLarge``, anything else unexpected the verifier's
/// ``ErrorCode/internalError``: one spelling each.
extension ErrorCode {
    /// `samlgate idp issue` (or `idp metadata` with a signer) could not sign: a key or
    /// certificate unreadable or unusable, a response the template refuses.
    static let issueFailed = ErrorCode("issue_failed")
    /// `samlgate idp keygen` could not make or write the key and certificate.
    static let keygenFailed = ErrorCode("keygen_failed")
    /// `samlgate serve` refused to start: Redis rejects the replay store's command or database.
    static let replayStoreUnsupported = ErrorCode("replay_store_unsupported")
}
