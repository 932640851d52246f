import SAMLEncoding
import SAMLVerification

extension GatewayError {
    /// The stable code of a refusal: the gateway's own, or the encoder's or verifier's code of the
    /// failure it reports (so `unknown_mvpd` is spelled once, by the verifier).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The gateway's own codes, private so that a new one breaks no caller (as swift-nio's
        /// `FileSystemError.Code`).
        private enum Base: String, Sendable {
            case missingParameter = "missing_parameter"
            case invalidParameterValue = "invalid_parameter_value"
            case methodNotAllowed = "method_not_allowed"
            case malformedRequest = "malformed_request"
            case bodyTooLarge = "body_too_large"
            case overloaded
            case replayStoreUnavailable = "replay_store_unavailable"
            case upstreamUnavailable = "upstream_unavailable"
            case upstreamTimeout = "upstream_timeout"
            case upstreamResponseInvalid = "upstream_response_invalid"
            case clientTimeout = "client_timeout"
            case unsupportedMediaType = "unsupported_media_type"
            case duplicateHeader = "duplicate_header"
            case duplicateParameter = "duplicate_parameter"
            case invalidRequest = "invalid_request"
            case invalidRequestTarget = "invalid_request_target"
            case headerTimeout = "header_timeout"
            case invalidPartner = "invalid_partner"
            case partnerAccessNotGranted = "partner_access_not_granted"
            case partnerAccessUndetermined = "partner_access_undetermined"
            case partnerFrameworkError = "partner_framework_error"
            case partnerProviderError = "partner_provider_error"
            case partnerProviderUndetermined = "partner_provider_undetermined"
            case partnerProviderExpired = "partner_provider_expired"
        }

        private enum Source: Hashable, Sendable {
            case gateway(Base)
            case verification(VerificationError.Code)
            case encoding(SAMLEncodingError.Code)
        }

        private let source: Source

        private init(_ base: Base) { source = .gateway(base) }

        /// The verifier's code of a failure the gateway reports.
        public init(_ code: VerificationError.Code) { source = .verification(code) }

        /// The encoder's code of a failure in a parameter's value.
        public init(_ code: SAMLEncodingError.Code) { source = .encoding(code) }

        /// The wire form: `code` of the error body, the `code` label of `samlgate_errors_total`.
        public var rawValue: String {
            switch source {
            case .gateway(let base): base.rawValue
            case .verification(let code): code.rawValue
            case .encoding(let code): code.rawValue
            }
        }

        public var description: String { rawValue }

        /// A required form field or header is missing or empty.
        public static let missingParameter = Code(.missingParameter)
        /// A form field or header has a value the backend would not accept.
        public static let invalidParameterValue = Code(.invalidParameterValue)
        /// An exchange path asked with another method than the backend serves there.
        public static let methodNotAllowed = Code(.methodNotAllowed)
        /// The request body could not be read (broken chunking, closed mid-body).
        public static let malformedRequest = Code(.malformedRequest)
        /// The request body is larger than `max-body-bytes`.
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// Every worker busy and the queue full, or the gateway shutting down.
        public static let overloaded = Code(.overloaded)
        /// The shared replay store cannot record the assertion (`replay-store-failure: closed`).
        public static let replayStoreUnavailable = Code(.replayStoreUnavailable)
        /// The backend could not be reached, or broke the connection.
        public static let upstreamUnavailable = Code(.upstreamUnavailable)
        /// The backend did not answer in time.
        public static let upstreamTimeout = Code(.upstreamTimeout)
        /// The backend's answer to this request could not be relayed (head over the limit, not HTTP/1.1).
        public static let upstreamResponseInvalid = Code(.upstreamResponseInvalid)
        /// The client's upload (or its reading of the answer) outlasted `total-timeout`.
        public static let clientTimeout = Code(.clientTimeout)
        /// An exchange body that is not `application/x-www-form-urlencoded`.
        public static let unsupportedMediaType = Code(.unsupportedMediaType)
        /// A header that must be given once is given more than once.
        public static let duplicateHeader = Code(.duplicateHeader)
        /// A form field the gateway reads is given twice, or spelled so that some form parser
        /// reads another field as it (`+SAMLResponse`, `samlresponse`, `mvpd[]`).
        public static let duplicateParameter = Code(.duplicateParameter)
        /// A request the gateway cannot forward safely (transfer coding, a body where none may be).
        public static let invalidRequest = Code(.invalidRequest)
        /// A request target spelled so that the gateway and the backend could route it apart.
        public static let invalidRequestTarget = Code(.invalidRequestTarget)
        /// The request head did not arrive whole within `header-timeout`.
        public static let headerTimeout = Code(.headerTimeout)
        /// The v2 exchange path names a partner other than Apple, the only one with a partner
        /// single sign-on framework.
        public static let invalidPartner = Code(.invalidPartner)
        /// The partner status says the user denied access to the TV provider account, or the
        /// app is restricted from it.
        public static let partnerAccessNotGranted = Code(.partnerAccessNotGranted)
        /// The partner status says the user has not decided on access (`notDetermined`).
        public static let partnerAccessUndetermined = Code(.partnerAccessUndetermined)
        /// The partner status reports an error of the framework while asking for the permission.
        public static let partnerFrameworkError = Code(.partnerFrameworkError)
        /// The partner status reports an error of the framework while asking for the provider.
        public static let partnerProviderError = Code(.partnerProviderError)
        /// Access is granted, but the partner status names no provider.
        public static let partnerProviderUndetermined = Code(.partnerProviderUndetermined)
        /// The provider profile on the device has expired (`expirationDate` passed).
        public static let partnerProviderExpired = Code(.partnerProviderExpired)
    }
}
