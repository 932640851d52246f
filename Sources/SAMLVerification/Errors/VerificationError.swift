import SAMLEncoding

/// Why a SAML response was not accepted.
///
/// Shaped like swift-nio's `FileSystemError`: a stable machine-readable ``code`` (used in HTTP
/// error bodies, CLI output, metrics labels and tests), a human ``message`` and where it was
/// raised. Two errors are equal when their codes are: the message is for people and may change.
/// New codes can be added without breaking callers, so match on the named constants of
/// ``ErrorCode`` (this module's are declared below) and keep a default branch. Which HTTP status
/// a code answers is the gateway's business, not the verifier's.
///
/// Messages never contain SAML content, NameIDs or attribute values: only structural facts,
/// algorithm URIs, status codes and library diagnostics, so they are safe to log.
public struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The codes are ``ErrorCode``'s: `VerificationError.Code.signatureInvalid` is ``ErrorCode/signatureInvalid``.
    public typealias Code = ErrorCode

    /// The stable code, e.g. ``ErrorCode/signatureInvalid`` (`"signature_invalid"`).
    public var code: ErrorCode
    /// A short explanation for operators; safe to log.
    public var message: String
    /// Where the error was raised.
    public var location: ErrorLocation

    public init(_ code: ErrorCode, _ message: String, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.location = ErrorLocation(fileID: fileID, line: line)
    }

    /// `true` when the response was well formed but cannot be trusted (forged, tampered,
    /// replayed, out of date); `false` when the input itself is unacceptable or the verifier's
    /// own side (trust, cache, libraries) failed.
    public var isTrustFailure: Bool {
        switch code {
        case .forbiddenDTD, .forbiddenMarkup, .tooLarge, .tooDeep, .tooManyAttributes, .tooManyNamespaces, .tooManyNodes, .malformedXML,
            .unsupportedEncryptedAssertion,
            .unknownMVPD, .internalError, .replayCacheFull, .metadataExpired, .metadataUnavailable:
            return false
        default:
            return true
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var debugDescription: String { "\(code.rawValue): \(message) (\(location))" }

    public static func == (lhs: VerificationError, rhs: VerificationError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

// MARK: - The verifier's codes

/// The verifier's codes (``VerificationError``; ``VerificationError/isTrustFailure`` sorts them).
/// New codes may be added; existing ones never change.
extension ErrorCode {
    // MARK: trust failures

    /// Neither the Response nor the Assertion carries a `ds:Signature` as a direct child.
    public static let signatureMissing = ErrorCode("signature_missing")
    /// A digest does not match (content changed after signing) or the signature is unusable.
    public static let signatureInvalid = ErrorCode("signature_invalid")
    /// The signature value does not verify with any trusted key of the MVPD
    /// (signed by someone else, or `SignedInfo` altered).
    public static let keyNotTrusted = ErrorCode("key_not_trusted")
    /// The signature does not reference exactly the element it sits in (wrong or missing URI,
    /// several references, ID resolving elsewhere; an empty URI other than on the Response's
    /// own signature).
    public static let referenceMismatch = ErrorCode("reference_mismatch")
    /// A signature, digest, canonicalization or transform algorithm outside the allow-list.
    public static let algorithmNotAllowed = ErrorCode("algorithm_not_allowed")
    /// Two elements claim the same ID: the shape of a signature-wrapping attack.
    public static let duplicateID = ErrorCode("duplicate_id")
    /// Not exactly one `saml:Assertion`, or it is not a direct child of the Response.
    public static let assertionCount = ErrorCode("assertion_count")
    /// The top-level `StatusCode` is not Success (the status is in the message).
    public static let statusNotSuccess = ErrorCode("status_not_success")
    /// The issuer differs from the MVPD's configured issuer (or Response and Assertion disagree).
    public static let issuerMismatch = ErrorCode("issuer_mismatch")
    /// The `AudienceRestriction` does not name the expected audience.
    public static let wrongAudience = ErrorCode("wrong_audience")
    /// `NotBefore` is in the future beyond the allowed clock skew.
    public static let notYetValid = ErrorCode("not_yet_valid")
    /// `NotOnOrAfter` (Conditions or SubjectConfirmationData) has passed beyond the clock skew.
    public static let expired = ErrorCode("expired")
    /// The assertion id was already accepted and has not expired yet.
    public static let replayed = ErrorCode("replayed")
    /// Neither `Conditions` nor the subject confirmations bound the assertion's lifetime
    /// (`NotOnOrAfter`): it would be valid, and replayable, forever.
    public static let unboundedValidity = ErrorCode("unbounded_validity")
    /// The assertion stays acceptable longer after verification than the MVPD's
    /// `max-assertion-lifetime` allows.
    public static let validityTooLong = ErrorCode("validity_too_long")
    /// `InResponseTo` differs from the request id the caller expected.
    public static let inResponseToMismatch = ErrorCode("in_response_to_mismatch")
    /// `Destination` or `Recipient` differs from the expected endpoint.
    public static let destinationMismatch = ErrorCode("destination_mismatch")

    /// The signature verifies on the response as received but not on its cookbook
    /// normalization, and the normalized document is not the signed one with only whitespace
    /// changed (normalization would turn hidden text into markup, or change a name or value):
    /// what would be forwarded is not what was signed.
    public static let normalizationChangesDocument = ErrorCode("normalization_changes_document")

    /// Outside the signed parts, the response carries what a backend could read as identity:
    /// when only the Assertion is signed, a Response child the protocol schema does not
    /// allow there (anything but `Issuer`, `Extensions`, `Status` and the Assertion), text,
    /// or a SAML assertion element (`NameID`, `Subject` …) inside `Issuer`, `Extensions` or
    /// `Status`; and, signed or not, a SAML element inside a `ds:Signature` (whose content
    /// no digest covers). A naive backend reads the first `NameID` in document order.
    public static let unsignedContent = ErrorCode("unsigned_content")

    // MARK: malformed input

    /// The document has a DOCTYPE (DTDs, entities, XXE and entity bombs are refused outright).
    public static let forbiddenDTD = ErrorCode("forbidden_dtd")
    /// The document holds a processing instruction (`<?xml-stylesheet …?>`) or an XInclude
    /// element: no SAML response needs them, and a backend's XML stack may act on them.
    public static let forbiddenMarkup = ErrorCode("forbidden_markup")
    /// The document is larger than the configured limit (default 1 MiB).
    public static let tooLarge = ErrorCode("too_large")
    /// Elements nest deeper than the configured limit (default 256).
    public static let tooDeep = ErrorCode("too_deep")
    /// An element carries more attributes than ``MarkupLimits/attributesPerElement``.
    public static let tooManyAttributes = ErrorCode("too_many_attributes")
    /// Too many namespace declarations on one element or in the document (``MarkupLimits``).
    public static let tooManyNamespaces = ErrorCode("too_many_namespaces")
    /// More markup items (elements, attributes, comments, processing instructions) than the
    /// document's size allows (``MarkupLimits/bytesPerMarkupItem``).
    public static let tooManyNodes = ErrorCode("too_many_nodes")
    /// Not well-formed XML, or not the SAML shape we accept.
    public static let malformedXML = ErrorCode("malformed_xml")
    /// The Response carries an `EncryptedAssertion`, which this gateway does not decrypt.
    public static let unsupportedEncryptedAssertion = ErrorCode("unsupported_encrypted_assertion")
    /// No trust configuration exists for the MVPD the caller named.
    public static let unknownMVPD = ErrorCode("unknown_mvpd")

    // MARK: the verifier's own side failed

    /// The replay cache is full of live assertion ids: the response is refused rather than
    /// letting the cache forget one (which would make a captured assertion replayable).
    public static let replayCacheFull = ErrorCode("replay_cache_full")

    /// The MVPD's metadata has passed its `validUntil`: its keys are no longer trusted until
    /// fresh metadata is loaded (the response itself may well be genuine; 503). Also the trust
    /// store's code (``TrustStoreError``) for fetched metadata that arrives already past its
    /// `validUntil`, of which the last good copy is kept: one name, one wire form.
    public static let metadataExpired = ErrorCode("metadata_expired")

    /// The MVPD's metadata is fetched from a URL and no good copy has arrived yet (the
    /// source has been down since the gateway started with an empty metadata cache): it has
    /// no key to verify with (503, like ``metadataExpired``).
    public static let metadataUnavailable = ErrorCode("metadata_unavailable")

    /// The XML libraries failed for a reason unrelated to the input (initialisation, memory).
    public static let internalError = ErrorCode("internal_error")
}
