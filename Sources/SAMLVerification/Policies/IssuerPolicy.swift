/// The Assertion's `Issuer` is required (SAML core requires one in every Assertion, and the
/// Assertion is signed, or inside the signed Response). It must equal the MVPD's configured
/// issuer when one is configured, and the Response's `Issuer`, when present, must agree with
/// it (`issuer_mismatch`).
///
/// Required even without a configured issuer: the signed issuer is the identity the replay
/// record is keyed on (see ``ReplayClaim``), so an issuer-less assertion would have no identity
/// but the MVPD the client names.
struct IssuerPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        if let responseIssuer = facts.responseIssuer, let assertionIssuer = facts.assertionIssuer, responseIssuer != assertionIssuer {
            throw VerificationError(.issuerMismatch, "the Response and Assertion issuers differ")
        }
        guard let issuer = facts.assertionIssuer else {
            throw VerificationError(.issuerMismatch, "the Assertion names no Issuer (SAML requires one)")
        }
        guard let expected = context.expectedIssuer else { return }
        guard issuer == expected else {
            throw VerificationError(.issuerMismatch, "issuer is not the one configured for this MVPD (\(expected))")
        }
    }
}
