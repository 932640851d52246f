/// When the caller expects a request id, the Response's `InResponseTo` must equal it, and so
/// must every `SubjectConfirmationData` `InResponseTo` present (`in_response_to_mismatch`).
/// Without an expected id (unsolicited responses, as VSA produces) nothing is checked.
struct InResponseToPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let expected = context.expectedInResponseTo else { return }
        guard facts.inResponseTo == expected else {
            throw VerificationError(.inResponseToMismatch, "InResponseTo does not match the request")
        }
        for confirmation in facts.subjectConfirmations {
            if let value = confirmation.inResponseTo, value != expected {
                throw VerificationError(.inResponseToMismatch, "SubjectConfirmationData InResponseTo does not match the request")
            }
        }
    }
}
