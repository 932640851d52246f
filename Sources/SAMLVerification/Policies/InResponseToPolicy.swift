/// When the caller expects a request id, the Response's `InResponseTo` must equal it, and so
/// must every `SubjectConfirmationData` `InResponseTo` present (`in_response_to_mismatch`).
/// Without an expected id (unsolicited responses, as VSA produces) nothing is checked.
struct InResponseToPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let expected = context.expectedInResponseTo else { return }
        if let value = facts.inResponseTo, value != expected {
            throw VerificationError(.inResponseToMismatch, "InResponseTo does not match the request")
        }
        var signedMatch = context.responseSigned && facts.inResponseTo == expected
        for confirmation in facts.subjectConfirmations {
            if let value = confirmation.inResponseTo {
                guard value == expected else {
                    throw VerificationError(.inResponseToMismatch, "SubjectConfirmationData InResponseTo does not match the request")
                }
                signedMatch = true
            }
        }
        // The binding to the request must come from signed content: the Response's attribute
        // when the Response is signed, otherwise the Assertion's SubjectConfirmationData.
        guard signedMatch else {
            throw VerificationError(.inResponseToMismatch, "no signed InResponseTo names the request")
        }
    }
}
