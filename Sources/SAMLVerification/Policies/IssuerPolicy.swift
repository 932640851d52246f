/// The Assertion's `Issuer` (signed) must equal the MVPD's configured issuer when one is
/// configured, and the Response's `Issuer`, when present, must agree with it (`issuer_mismatch`).
/// The Response's Issuer stands in for a missing Assertion Issuer only when the Response is signed.
struct IssuerPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        if let responseIssuer = facts.responseIssuer, let assertionIssuer = facts.assertionIssuer, responseIssuer != assertionIssuer {
            throw VerificationError(.issuerMismatch, "the Response and Assertion issuers differ")
        }
        guard let expected = context.expectedIssuer else { return }
        guard let issuer = facts.signedIssuer(responseSigned: context.responseSigned) else {
            throw VerificationError(.issuerMismatch, "no Issuer, expected \(expected)")
        }
        guard issuer == expected else {
            throw VerificationError(.issuerMismatch, "issuer is not the one configured for this MVPD (\(expected))")
        }
    }
}
