extension VerificationError {
    /// A stable error code. The raw value is the wire form (`"signature_invalid"`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The codes themselves, private so that a new one breaks no caller: callers compare with
        /// the named constants below and keep a default branch (as swift-nio's `FileSystemError.Code`).
        private enum Base: String, Sendable {
            case signatureMissing = "signature_missing"
            case signatureInvalid = "signature_invalid"
            case keyNotTrusted = "key_not_trusted"
            case referenceMismatch = "reference_mismatch"
            case algorithmNotAllowed = "algorithm_not_allowed"
            case duplicateID = "duplicate_id"
            case assertionCount = "assertion_count"
            case statusNotSuccess = "status_not_success"
            case issuerMismatch = "issuer_mismatch"
            case wrongAudience = "wrong_audience"
            case notYetValid = "not_yet_valid"
            case expired
            case replayed
            case unboundedValidity = "unbounded_validity"
            case inResponseToMismatch = "in_response_to_mismatch"
            case destinationMismatch = "destination_mismatch"
            case normalizationChangesDocument = "normalization_changes_document"
            case unsignedContent = "unsigned_content"
            case forbiddenDTD = "forbidden_dtd"
            case forbiddenMarkup = "forbidden_markup"
            case tooLarge = "too_large"
            case tooDeep = "too_deep"
            case tooManyAttributes = "too_many_attributes"
            case tooManyNamespaces = "too_many_namespaces"
            case tooManyNodes = "too_many_nodes"
            case malformedXML = "malformed_xml"
            case unsupportedEncryptedAssertion = "unsupported_encrypted_assertion"
            case unknownMVPD = "unknown_mvpd"
            case replayCacheFull = "replay_cache_full"
            case metadataExpired = "metadata_expired"
            case metadataUnavailable = "metadata_unavailable"
            case internalError = "internal_error"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The wire form (`"signature_invalid"`), as HTTP error bodies, logs and metric labels show it.
        public var rawValue: String { base.rawValue }

        public var description: String { base.rawValue }

        // MARK: trust failures

        /// Neither the Response nor the Assertion carries a `ds:Signature` as a direct child.
        public static let signatureMissing = Code(.signatureMissing)
        /// A digest does not match (content changed after signing) or the signature is unusable.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The signature value does not verify with any trusted key of the MVPD
        /// (signed by someone else, or `SignedInfo` altered).
        public static let keyNotTrusted = Code(.keyNotTrusted)
        /// The signature does not reference exactly the element it sits in (wrong or missing URI,
        /// several references, ID resolving elsewhere; an empty URI other than on the Response's
        /// own signature).
        public static let referenceMismatch = Code(.referenceMismatch)
        /// A signature, digest, canonicalization or transform algorithm outside the allow-list.
        public static let algorithmNotAllowed = Code(.algorithmNotAllowed)
        /// Two elements claim the same ID: the shape of a signature-wrapping attack.
        public static let duplicateID = Code(.duplicateID)
        /// Not exactly one `saml:Assertion`, or it is not a direct child of the Response.
        public static let assertionCount = Code(.assertionCount)
        /// The top-level `StatusCode` is not Success (the status is in the message).
        public static let statusNotSuccess = Code(.statusNotSuccess)
        /// The issuer differs from the MVPD's configured issuer (or Response and Assertion disagree).
        public static let issuerMismatch = Code(.issuerMismatch)
        /// The `AudienceRestriction` does not name the expected audience.
        public static let wrongAudience = Code(.wrongAudience)
        /// `NotBefore` is in the future beyond the allowed clock skew.
        public static let notYetValid = Code(.notYetValid)
        /// `NotOnOrAfter` (Conditions or SubjectConfirmationData) has passed beyond the clock skew.
        public static let expired = Code(.expired)
        /// The assertion id was already accepted and has not expired yet.
        public static let replayed = Code(.replayed)
        /// Neither `Conditions` nor the subject confirmations bound the assertion's lifetime
        /// (`NotOnOrAfter`): it would be valid, and replayable, forever.
        public static let unboundedValidity = Code(.unboundedValidity)
        /// `InResponseTo` differs from the request id the caller expected.
        public static let inResponseToMismatch = Code(.inResponseToMismatch)
        /// `Destination` or `Recipient` differs from the expected endpoint.
        public static let destinationMismatch = Code(.destinationMismatch)

        /// The signature verifies on the response as received but not on its cookbook
        /// normalization, and the normalized document is not the signed one with only whitespace
        /// changed (normalization would turn hidden text into markup, or change a name or value):
        /// what would be forwarded is not what was signed.
        public static let normalizationChangesDocument = Code(.normalizationChangesDocument)

        /// Outside the signed parts, the response carries what a backend could read as identity:
        /// when only the Assertion is signed, a Response child the protocol schema does not
        /// allow there (anything but `Issuer`, `Extensions`, `Status` and the Assertion), text,
        /// or a SAML assertion element (`NameID`, `Subject` …) inside `Issuer`, `Extensions` or
        /// `Status`; and, signed or not, a SAML element inside a `ds:Signature` (whose content
        /// no digest covers). A naive backend reads the first `NameID` in document order.
        public static let unsignedContent = Code(.unsignedContent)

        // MARK: malformed input

        /// The document has a DOCTYPE (DTDs, entities, XXE and entity bombs are refused outright).
        public static let forbiddenDTD = Code(.forbiddenDTD)
        /// The document holds a processing instruction (`<?xml-stylesheet …?>`) or an XInclude
        /// element: no SAML response needs them, and a backend's XML stack may act on them.
        public static let forbiddenMarkup = Code(.forbiddenMarkup)
        /// The document is larger than the configured limit (default 1 MiB).
        public static let tooLarge = Code(.tooLarge)
        /// Elements nest deeper than the configured limit (default 256).
        public static let tooDeep = Code(.tooDeep)
        /// An element carries more attributes than ``MarkupLimits/attributesPerElement``.
        public static let tooManyAttributes = Code(.tooManyAttributes)
        /// Too many namespace declarations on one element or in the document (``MarkupLimits``).
        public static let tooManyNamespaces = Code(.tooManyNamespaces)
        /// More markup items (elements, attributes, comments, processing instructions) than the
        /// document's size allows (``MarkupLimits/bytesPerMarkupItem``).
        public static let tooManyNodes = Code(.tooManyNodes)
        /// Not well-formed XML, or not the SAML shape we accept.
        public static let malformedXML = Code(.malformedXML)
        /// The Response carries an `EncryptedAssertion`, which this gateway does not decrypt.
        public static let unsupportedEncryptedAssertion = Code(.unsupportedEncryptedAssertion)
        /// No trust configuration exists for the MVPD the caller named.
        public static let unknownMVPD = Code(.unknownMVPD)

        // MARK: the verifier's own side failed

        /// The replay cache is full of live assertion ids: the response is refused rather than
        /// letting the cache forget one (which would make a captured assertion replayable).
        public static let replayCacheFull = Code(.replayCacheFull)

        /// The MVPD's metadata has passed its `validUntil`: its keys are no longer trusted until
        /// fresh metadata is loaded (the response itself may well be genuine; 503).
        public static let metadataExpired = Code(.metadataExpired)

        /// The MVPD's metadata is fetched from a URL and no good copy has arrived yet (the
        /// source has been down since the gateway started with an empty metadata cache): it has
        /// no key to verify with (503, like ``metadataExpired``).
        public static let metadataUnavailable = Code(.metadataUnavailable)

        /// The XML libraries failed for a reason unrelated to the input (initialisation, memory).
        public static let internalError = Code(.internalError)

        /// The codes that mean "well formed but not trustworthy" (forged, tampered, replayed, out of
        /// date), as opposed to malformed input or the verifier's own trouble.
        public var isTrustFailure: Bool {
            switch self {
            case .forbiddenDTD, .forbiddenMarkup, .tooLarge, .tooDeep, .tooManyAttributes, .tooManyNamespaces, .tooManyNodes, .malformedXML,
                .unsupportedEncryptedAssertion,
                .unknownMVPD, .internalError, .replayCacheFull, .metadataExpired, .metadataUnavailable:
                return false
            default:
                return true
            }
        }
    }
}
