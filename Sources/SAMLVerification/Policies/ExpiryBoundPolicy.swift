/// The assertion's lifetime must be bounded (`unbounded_validity`): `Conditions` or every
/// subject confirmation must carry `NotOnOrAfter`. An assertion valid forever could be replayed
/// forever, since the replay cache can only remember ids until they expire. With an MVPD's
/// `max-assertion-lifetime`, the bound may lie at most that far (plus the skew) after now
/// (`validity_too_long`): a response that stays usable for days is worth more to whoever
/// captures it.
struct ExpiryBoundPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let bound = facts.acceptanceBound else {
            throw VerificationError(.unboundedValidity, "neither Conditions nor SubjectConfirmationData has NotOnOrAfter")
        }
        if let longest = context.maxLifetime, bound.timeIntervalSince(context.now) > longest + context.clockSkew {
            throw VerificationError(
                .validityTooLong,
                "the assertion stays acceptable \(Int(bound.timeIntervalSince(context.now))) s after now; this MVPD allows \(Int(longest)) s")
        }
    }
}
