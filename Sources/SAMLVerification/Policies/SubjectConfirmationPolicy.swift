/// `SubjectConfirmationData` time window (`NotOnOrAfter` → `expired`, `NotBefore` →
/// `not_yet_valid`), with the clock skew. When the Subject has several confirmations, one
/// that passes is enough (SAML semantics); the first failure is reported otherwise.
/// `Recipient` and `InResponseTo` of the confirmation are checked by ``DestinationPolicy``
/// and ``InResponseToPolicy``.
struct SubjectConfirmationPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard !facts.subjectConfirmations.isEmpty else { return }
        var firstFailure: VerificationError?
        for confirmation in facts.subjectConfirmations {
            do {
                try check(confirmation, context)
                return
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }

    private func check(_ confirmation: ResponseFacts.SubjectConfirmation, _ context: PolicyContext) throws(VerificationError) {
        if let notBefore = confirmation.notBefore, context.now.addingTimeInterval(context.clockSkew) < notBefore {
            throw VerificationError(.notYetValid, "the subject confirmation is not valid before \(notBefore)")
        }
        if let notOnOrAfter = confirmation.notOnOrAfter, context.now.addingTimeInterval(-context.clockSkew) >= notOnOrAfter {
            throw VerificationError(.expired, "the subject confirmation expired at \(notOnOrAfter)")
        }
    }
}
