/// The top-level `samlp:StatusCode` must be `…:status:Success` (`status_not_success`).
/// The message carries the status codes (never the free-text StatusMessage).
struct StatusPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let code = facts.statusCode else {
            throw VerificationError(.statusNotSuccess, "the Response has no StatusCode")
        }
        guard code == SAMLNamespace.statusSuccess else {
            var status = String(code.prefix(200))
            if let sub = facts.subStatusCode { status += " / " + String(sub.prefix(200)) }
            throw VerificationError(.statusNotSuccess, "status is \(status)")
        }
    }
}
