/// When an expected endpoint is configured, the Response's `Destination` and every
/// `SubjectConfirmationData` `Recipient` that is present must equal it, and at least one of
/// them must be present (`destination_mismatch`). An unsigned Response's `Destination` never
/// counts as the one that is present (it is the attacker's to write).
struct DestinationPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let expected = context.expectedDestination else { return }
        var seen = false
        if let destination = facts.destination, context.responseSigned {
            guard destination == expected else {
                throw VerificationError(.destinationMismatch, "Destination is not \(expected)")
            }
            seen = true
        }
        for confirmation in facts.subjectConfirmations {
            if let recipient = confirmation.recipient {
                guard recipient == expected else {
                    throw VerificationError(.destinationMismatch, "Recipient is not \(expected)")
                }
                seen = true
            }
        }
        guard seen else {
            throw VerificationError(.destinationMismatch, "neither Destination nor Recipient is present")
        }
    }
}
