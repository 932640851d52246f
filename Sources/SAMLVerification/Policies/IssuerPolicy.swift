/// A signed `Issuer` is required (SAML core requires one in every Assertion): the Assertion's,
/// or the Response's when the Response itself is signed. It must equal the MVPD's configured
/// issuer when one is configured, and the Response's `Issuer`, when present, must agree with
/// the Assertion's (`issuer_mismatch`).
///
/// Required even without a configured issuer: the signed issuer is the identity the replay
/// record is keyed on (see ``ReplayClaim``), so an issuer-less assertion would have no identity
/// but the MVPD the client names.
struct IssuerPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        if let responseIssuer = facts.responseIssuer, let assertionIssuer = facts.assertionIssuer, responseIssuer != assertionIssuer {
            throw VerificationError(.issuerMismatch, "the Response and Assertion issuers differ")
        }
        guard let issuer = facts.signedIssuer(responseSigned: context.responseSigned) else {
            throw VerificationError(.issuerMismatch, "the signed content names no Issuer (SAML requires one)")
        }
        guard let expected = context.expectedIssuer else { return }
        guard issuer == expected else {
            throw VerificationError(.issuerMismatch, "issuer is not the one configured for this MVPD (\(expected))")
        }
    }
}
