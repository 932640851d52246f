import SAMLEncoding

/// The gateway's own codes (``GatewayError``). A refusal that reports the encoder's or the
/// verifier's failure carries that failure's code (`unknown_mvpd` is the verifier's), so these
/// are only what the gateway adds. Public for the benchmarks, like ``GatewayError``.
@_spi(Benchmarks) extension ErrorCode {
    /// A required form field or header is missing or empty.
    public static let missingParameter = ErrorCode("missing_parameter")
    /// A form field or header has a value the backend would not accept.
    public static let invalidParameterValue = ErrorCode("invalid_parameter_value")
    /// An exchange path asked with another method than the backend serves there.
    public static let methodNotAllowed = ErrorCode("method_not_allowed")
    /// The request body could not be read (broken chunking, closed mid-body).
    public static let malformedRequest = ErrorCode("malformed_request")
    /// The request body is larger than `max-body-bytes`.
    public static let bodyTooLarge = ErrorCode("body_too_large")
    /// Every worker busy and the queue full, or the gateway shutting down.
    public static let overloaded = ErrorCode("overloaded")
    /// The client's token bucket is empty (`throttle-exchanges`, `throttle-pass-through`): 429
    /// as the backend answers it.
    public static let throttled = ErrorCode("throttled")
    /// The shared replay store cannot record the assertion (`replay-store-failure: closed`).
    public static let replayStoreUnavailable = ErrorCode("replay_store_unavailable")
    /// The backend could not be reached, or broke the connection.
    public static let upstreamUnavailable = ErrorCode("upstream_unavailable")
    /// The backend did not answer in time.
    public static let upstreamTimeout = ErrorCode("upstream_timeout")
    /// The backend's answer to this request could not be relayed (head over the limit, not HTTP/1.1).
    public static let upstreamResponseInvalid = ErrorCode("upstream_response_invalid")
    /// The client's upload (or its reading of the answer) outlasted `total-timeout`.
    public static let clientTimeout = ErrorCode("client_timeout")
    /// An exchange body that is not `application/x-www-form-urlencoded`.
    public static let unsupportedMediaType = ErrorCode("unsupported_media_type")
    /// A header that must be given once is given more than once.
    public static let duplicateHeader = ErrorCode("duplicate_header")
    /// A form field the gateway reads is given twice, or spelled so that some form parser
    /// reads another field as it (`+SAMLResponse`, `samlresponse`, `mvpd[]`).
    public static let duplicateParameter = ErrorCode("duplicate_parameter")
    /// A request the gateway cannot forward safely (transfer coding, a body where none may be).
    public static let invalidRequest = ErrorCode("invalid_request")
    /// A request target spelled so that the gateway and the backend could route it apart.
    public static let invalidRequestTarget = ErrorCode("invalid_request_target")
    /// A request other than a probe or the scrape on the plain probe listener (`plain-port`).
    public static let tlsRequired = ErrorCode("tls_required")
    /// The request head did not arrive whole within `header-timeout`.
    public static let headerTimeout = ErrorCode("header_timeout")
    /// The v2 exchange path names a partner other than Apple, the only one with a partner
    /// single sign-on framework.
    public static let invalidPartner = ErrorCode("invalid_partner")
    /// The partner status says the user denied access to the TV provider account, or the
    /// app is restricted from it.
    public static let partnerAccessNotGranted = ErrorCode("partner_access_not_granted")
    /// The partner status says the user has not decided on access (`notDetermined`).
    public static let partnerAccessUndetermined = ErrorCode("partner_access_undetermined")
    /// The partner status reports an error of the framework while asking for the permission.
    public static let partnerFrameworkError = ErrorCode("partner_framework_error")
    /// The partner status reports an error of the framework while asking for the provider.
    public static let partnerProviderError = ErrorCode("partner_provider_error")
    /// Access is granted, but the partner status names no provider.
    public static let partnerProviderUndetermined = ErrorCode("partner_provider_undetermined")
    /// The provider profile on the device has expired (`expirationDate` passed).
    public static let partnerProviderExpired = ErrorCode("partner_provider_expired")
}
