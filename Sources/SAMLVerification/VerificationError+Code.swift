extension VerificationError {
    /// A stable error code. The raw value is the wire form (`"signature_invalid"`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        // MARK: trust failures (401)

        /// Neither the Response nor the Assertion carries a `ds:Signature` as a direct child.
        public static let signatureMissing = Code(rawValue: "signature_missing")
        /// A digest does not match (content changed after signing) or the signature is unusable.
        public static let signatureInvalid = Code(rawValue: "signature_invalid")
        /// The signature value does not verify with any trusted key of the MVPD
        /// (signed by someone else, or `SignedInfo` altered).
        public static let keyNotTrusted = Code(rawValue: "key_not_trusted")
        /// The signature does not reference exactly the element it sits in
        /// (wrong or empty URI, several references, ID resolving elsewhere).
        public static let referenceMismatch = Code(rawValue: "reference_mismatch")
        /// A signature, digest, canonicalization or transform algorithm outside the allow-list.
        public static let algorithmNotAllowed = Code(rawValue: "algorithm_not_allowed")
        /// Two elements claim the same ID: the shape of a signature-wrapping attack.
        public static let duplicateID = Code(rawValue: "duplicate_id")
        /// Not exactly one `saml:Assertion`, or it is not a direct child of the Response.
        public static let assertionCount = Code(rawValue: "assertion_count")
        /// The top-level `StatusCode` is not Success (the status is in the message).
        public static let statusNotSuccess = Code(rawValue: "status_not_success")
        /// The issuer differs from the MVPD's configured issuer (or Response and Assertion disagree).
        public static let issuerMismatch = Code(rawValue: "issuer_mismatch")
        /// The `AudienceRestriction` does not name the expected audience.
        public static let wrongAudience = Code(rawValue: "wrong_audience")
        /// `NotBefore` is in the future beyond the allowed clock skew.
        public static let notYetValid = Code(rawValue: "not_yet_valid")
        /// `NotOnOrAfter` (Conditions or SubjectConfirmationData) has passed beyond the clock skew.
        public static let expired = Code(rawValue: "expired")
        /// The assertion id was already accepted and has not expired yet.
        public static let replayed = Code(rawValue: "replayed")
        /// Neither `Conditions` nor the subject confirmations bound the assertion's lifetime
        /// (`NotOnOrAfter`): it would be valid, and replayable, forever.
        public static let unboundedValidity = Code(rawValue: "unbounded_validity")
        /// `InResponseTo` differs from the request id the caller expected.
        public static let inResponseToMismatch = Code(rawValue: "in_response_to_mismatch")
        /// `Destination` or `Recipient` differs from the expected endpoint.
        public static let destinationMismatch = Code(rawValue: "destination_mismatch")

        /// The signature verifies on the response as received but not on its cookbook
        /// normalization, and the normalized document is not the signed one with only whitespace
        /// changed (normalization would turn hidden text into markup, or change a name or value):
        /// what would be forwarded is not what was signed.
        public static let normalizationChangesDocument = Code(rawValue: "normalization_changes_document")

        // MARK: malformed input (400)

        /// The document has a DOCTYPE (DTDs, entities, XXE and entity bombs are refused outright).
        public static let forbiddenDTD = Code(rawValue: "forbidden_dtd")
        /// The document is larger than the configured limit (default 1 MiB).
        public static let tooLarge = Code(rawValue: "too_large")
        /// Elements nest deeper than the configured limit (default 256).
        public static let tooDeep = Code(rawValue: "too_deep")
        /// An element carries more attributes than ``MarkupLimits/attributesPerElement``.
        public static let tooManyAttributes = Code(rawValue: "too_many_attributes")
        /// Too many namespace declarations on one element or in the document (``MarkupLimits``).
        public static let tooManyNamespaces = Code(rawValue: "too_many_namespaces")
        /// More markup items (elements, attributes, comments, processing instructions) than the
        /// document's size allows (``MarkupLimits/bytesPerMarkupItem``).
        public static let tooManyNodes = Code(rawValue: "too_many_nodes")
        /// Not well-formed XML, or not the SAML shape we accept.
        public static let malformedXML = Code(rawValue: "malformed_xml")
        /// The Response carries an `EncryptedAssertion`, which this gateway does not decrypt.
        public static let unsupportedEncryptedAssertion = Code(rawValue: "unsupported_encrypted_assertion")
        /// No trust configuration exists for the MVPD the caller named.
        public static let unknownMVPD = Code(rawValue: "unknown_mvpd")

        // MARK: server failure (500, 503)

        /// The replay cache is full of live assertion ids: the response is refused rather than
        /// letting the cache forget one (which would make a captured assertion replayable).
        public static let replayCacheFull = Code(rawValue: "replay_cache_full")

        /// The MVPD's metadata has passed its `validUntil`: its keys are no longer trusted until
        /// fresh metadata is loaded (the response itself may well be genuine; 503).
        public static let metadataExpired = Code(rawValue: "metadata_expired")

        /// The MVPD's metadata is fetched from a URL and no good copy has arrived yet (the
        /// source has been down since the gateway started with an empty metadata cache): it has
        /// no key to verify with (503, like ``metadataExpired``).
        public static let metadataUnavailable = Code(rawValue: "metadata_unavailable")

        /// The XML libraries failed for a reason unrelated to the input (initialisation, memory).
        public static let internalError = Code(rawValue: "internal_error")

        /// The codes that mean "well formed but not trustworthy" (HTTP 401).
        public var isTrustFailure: Bool {
            switch self {
            case .forbiddenDTD, .tooLarge, .tooDeep, .tooManyAttributes, .tooManyNamespaces, .tooManyNodes, .malformedXML,
                .unsupportedEncryptedAssertion,
                .unknownMVPD, .internalError, .replayCacheFull, .metadataExpired, .metadataUnavailable:
                return false
            default:
                return true
            }
        }
    }
}
