/// One SAML rule applied to a response whose signature has already been verified.
///
/// Shaped like swift-certificates' verifier policies: small, one per file, each either passes
/// or throws the ``VerificationError`` that names the broken rule.
protocol ResponsePolicy: Sendable {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError)
}
