/// The assertion's lifetime must be bounded (`unbounded_validity`): `Conditions` or every
/// subject confirmation must carry `NotOnOrAfter`. An assertion valid forever could be replayed
/// forever, since the replay cache can only remember ids until they expire.
struct ExpiryBoundPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard facts.acceptanceBound != nil else {
            throw VerificationError(.unboundedValidity, "neither Conditions nor SubjectConfirmationData has NotOnOrAfter")
        }
    }
}
