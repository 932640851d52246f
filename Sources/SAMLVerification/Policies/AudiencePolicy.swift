/// Every `AudienceRestriction` must list the expected audience, and there must be at least
/// one (`wrong_audience`). Default audience: `https://saml.sp.auth.adobe.com`.
struct AudiencePolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard !facts.audienceRestrictions.isEmpty else {
            throw VerificationError(.wrongAudience, "no AudienceRestriction, expected \(context.audience)")
        }
        for restriction in facts.audienceRestrictions where !restriction.contains(context.audience) {
            throw VerificationError(.wrongAudience, "the AudienceRestriction does not include \(context.audience)")
        }
    }
}
