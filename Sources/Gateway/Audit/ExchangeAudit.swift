import SAMLVerification

/// What a worker adds to a verified exchange for its audit line, when there is an audit trail:
/// the assertion's digest and, with a key, the subject's pseudonym. Computed on the worker, so
/// the NameID never leaves it (``PreparedExchange`` carries only the HMAC) and the event loop
/// does no hashing.
struct ExchangeAudit: Sendable {
    let key: AuditKey?

    /// The `assertion` and `subject` of the line (``AuditRecord``).
    func facts(of response: VerifiedResponse) -> (assertion: String?, subject: String?) {
        (response.replayClaim.map(AuditDigest.assertion), response.nameID.flatMap { key?.subject(of: $0) })
    }
}
