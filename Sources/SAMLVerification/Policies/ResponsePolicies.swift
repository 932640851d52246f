// The SAML rules applied to a response whose signature has verified, in the order `Verifier` runs
// them, and the per-request expectations they compare it with.

import Foundation

// MARK: - ResponsePolicy

/// One SAML rule applied to a response whose signature has already been verified.
///
/// Shaped like swift-certificates' verifier policies: small, each either passes or throws the
/// ``VerificationError`` that names the broken rule.
protocol ResponsePolicy: Sendable {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError)
}

// MARK: - PolicyContext

/// The per-request expectations the policies compare a response with.
struct PolicyContext {
    var now: Date
    var clockSkew: TimeInterval
    /// ``VerificationOptions/maxAssertionLifetime``.
    var maxLifetime: TimeInterval? = nil
    var audience: String
    var expectedIssuer: String?
    var expectedInResponseTo: String?
    var expectedDestination: String?
    /// Whether the Response element itself was signed. When only the Assertion is, values read
    /// from the Response (Issuer, Destination, InResponseTo) are attacker-controlled and must
    /// not satisfy a check.
    var responseSigned: Bool
}

// MARK: - StatusPolicy

/// The top-level `samlp:StatusCode` must be `…:status:Success` (`status_not_success`).
/// The message carries the status codes (never the free-text StatusMessage).
struct StatusPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard let code = facts.statusCode else {
            throw VerificationError(.statusNotSuccess, "the Response has no StatusCode")
        }
        guard code == SAMLNamespace.statusSuccess else {
            var status = String(code.prefix(200))
            if let sub = facts.subStatusCode { status += " / " + String(sub.prefix(200)) }
            throw VerificationError(.statusNotSuccess, "status is \(status)")
        }
    }
}

// MARK: - ExpiryBoundPolicy

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

// MARK: - IssuerPolicy

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

// MARK: - AudiencePolicy

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

// MARK: - ValidityWindowPolicy

/// `Conditions` `NotBefore` / `NotOnOrAfter`, with the configured clock skew (default 120 s):
/// `not_yet_valid` when `now + skew < NotBefore`, `expired` when `now - skew >= NotOnOrAfter`.
struct ValidityWindowPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        try context.checkWindow(notBefore: facts.notBefore, notOnOrAfter: facts.notOnOrAfter, of: "the assertion")
    }
}

extension PolicyContext {
    /// A validity window with the clock skew: `not_yet_valid` before `notBefore`, `expired` at or
    /// after `notOnOrAfter`; `what` names the element in the message.
    func checkWindow(notBefore: Date?, notOnOrAfter: Date?, of what: String) throws(VerificationError) {
        if let notBefore, now.addingTimeInterval(clockSkew) < notBefore {
            throw VerificationError(.notYetValid, "\(what) is not valid before \(notBefore)")
        }
        if let notOnOrAfter, now.addingTimeInterval(-clockSkew) >= notOnOrAfter {
            throw VerificationError(.expired, "\(what) expired at \(notOnOrAfter)")
        }
    }
}

// MARK: - SubjectConfirmationPolicy

/// `SubjectConfirmationData` time window (`NotOnOrAfter` → `expired`, `NotBefore` →
/// `not_yet_valid`), with the clock skew. When the Subject has several confirmations, one
/// that passes is enough (SAML semantics); the first failure is reported otherwise.
/// `Recipient` and `InResponseTo` of the confirmation are checked by ``DestinationPolicy``
/// and ``InResponseToPolicy``.
struct SubjectConfirmationPolicy: ResponsePolicy {
    func check(_ facts: ResponseFacts, _ context: PolicyContext) throws(VerificationError) {
        guard !facts.subjectConfirmations.isEmpty else { return }
        var firstFailure: VerificationError?
        for confirmation in facts.subjectConfirmations {
            do {
                try check(confirmation, context)
                return
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }

    private func check(_ confirmation: ResponseFacts.SubjectConfirmation, _ context: PolicyContext) throws(VerificationError) {
        try context.checkWindow(notBefore: confirmation.notBefore, notOnOrAfter: confirmation.notOnOrAfter, of: "the subject confirmation")
    }
}

// MARK: - InResponseToPolicy

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

// MARK: - DestinationPolicy

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
