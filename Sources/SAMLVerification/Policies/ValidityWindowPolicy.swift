/// `Conditions` `NotBefore` / `NotOnOrAfter`, with the configured clock skew (default 120 s):
/// `not_yet_valid` when `now + skew < NotBefore`, `expired` when `now - skew >= NotOnOrAfter`.
struct ValidityWindowPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        if let notBefore = facts.notBefore, context.now.addingTimeInterval(context.clockSkew) < notBefore {
            throw VerificationError(.notYetValid, "the assertion is not valid before \(notBefore)")
        }
        if let notOnOrAfter = facts.notOnOrAfter, context.now.addingTimeInterval(-context.clockSkew) >= notOnOrAfter {
            throw VerificationError(.expired, "the assertion expired at \(notOnOrAfter)")
        }
    }
}
