import NIOCore
import SAMLEncoding
import SAMLVerification
import ServerSupport

/// The backend's vocabulary for the gateway's refusals: which published code answers which of
/// samlgate's reasons, on which API. docs/errors.md writes the same mapping out as a table.
extension GatewayError {
    /// What a client of `api` gets for this refusal: the HTTP status and the enhanced error.
    /// `exchange`: the request is a token exchange, whose body is the `SAMLResponse` (so a body
    /// the gateway cannot take is that parameter's fault). `showReason`: samlgate's reason goes in
    /// `details` (the `error-details` setting). The HTTP status is the error's own, except that a
    /// missing or unusable access token is `401`, as the backend answers it.
    public func answer(api: BackendAPI, exchange: Bool, showReason: Bool) -> (status: Int, body: EnhancedError) {
        let code = backendCode(api: api, exchange: exchange)
        let httpStatus = code.action == .applicationRegistration ? 401 : status
        return (httpStatus, EnhancedError(code: code, httpStatus: httpStatus, message: message, details: showReason ? reasonDetails : nil))
    }

    /// The published code for this refusal on `api` (see docs/errors.md, "What the client gets").
    public func backendCode(api: BackendAPI, exchange: Bool) -> BackendErrorCode {
        if let failure = underlying as? VerificationError {
            return Self.backendCode(verification: failure.code, api: api)
        }
        let parameter = subject.flatMap { BackendErrorCode.forParameter($0, api: api) }
        // An encoding failure is the field's it was found in (bad UTF-8 in `mvpd`), most often
        // `SAMLResponse`.
        if underlying is SAMLEncodingError { return parameter ?? .invalidParameterSAMLResponse }
        if code == .unknownMVPD { return Self.backendCode(verification: .unknownMVPD, api: api) }
        switch code {
        case .missingParameter, .invalidParameterValue, .duplicateParameter, .duplicateHeader:
            return parameter ?? (exchange ? .invalidParameterSAMLResponse : .generic(api: api))
        case .invalidRequest:
            // A header the route needs, named in `Connection`: the backend would miss it.
            return parameter ?? .generic(api: api)
        case .unsupportedMediaType, .malformedRequest, .bodyTooLarge, .clientTimeout, .invalidRequestTarget:
            // On an exchange: the `SAMLResponse` could not be taken from the body (or was put in
            // the query, where the backend does not read it).
            return exchange ? .invalidParameterSAMLResponse : .generic(api: api)
        case .partnerAccessNotGranted: return .invalidHeaderPFSPermissionAccessNotGranted
        case .partnerAccessUndetermined, .partnerFrameworkError: return .invalidHeaderPFSPermissionAccessNotDetermined
        case .partnerProviderError, .partnerProviderUndetermined: return .invalidHeaderPFSProviderIDNotDetermined
        case .partnerProviderExpired: return .invalidHeaderPFSProviderInfoExpired
        case .invalidPartner: return .invalidParameterPartner
        case .overloaded: return .maximumExecutionTimeExceeded
        case .replayStoreUnavailable, .upstreamUnavailable: return .networkConnectionTimeout
        case .upstreamTimeout: return .maximumExecutionTimeExceeded
        case .upstreamResponseInvalid: return .networkReceivedError
        default:
            // method_not_allowed, a request target no route has, header_timeout, tls_required: nothing the
            // backend's lists name.
            return .generic(api: api)
        }
    }

    /// The published code for a verifier failure: anything wrong with the response is the
    /// `SAMLResponse` parameter's; a provider the trust store does not know is an unknown
    /// integration (v1, the `mvpd` field) or an undetermined partner provider (v2, the partner
    /// status names it); the gateway's own trouble is a server error or a `retry`.
    static func backendCode(verification code: ErrorCode, api: BackendAPI) -> BackendErrorCode {
        switch code {
        case .unknownMVPD: api == .v1 ? .unknownIntegration : .invalidHeaderPFSProviderIDNotDetermined
        case .replayCacheFull: .maximumExecutionTimeExceeded
        case .internalError, .metadataExpired, .metadataUnavailable: .generic(api: api)
        default: .invalidParameterSAMLResponse
        }
    }
}

/// Every refusal of the gateway is rendered here (hummingbird's `HTTPResponseError` shape): the
/// backend's enhanced error for the case. Rendering only: the request's observation
/// (``RequestObserver``) counts and logs it.
extension GatewayError {
    /// The answer to a request refused with this error, and the backend's code it carries (for the log line).
    /// - Parameters:
    ///   - api: the vocabulary of the answer (the request's API, or the current one when the
    ///     request could not be read).
    ///   - exchange: the request is a token exchange (see ``answer(api:exchange:showReason:)``).
    ///   - accept: the client's `Accept`, which chooses XML on `/api/v1/…`.
    func response(
        requestID: String, api: BackendAPI, exchange: Bool, accept: String?, configuration: GatewayConfiguration
    ) -> (GatewayResponse, BackendErrorCode) {
        let (status, enhanced) = answer(api: api, exchange: exchange, showReason: configuration.errorDetails == .reason)
        var headers: [(String, String)] = []
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if code == .throttled {
            // The backend's throttle answers with its proxy's HTML page, not an enhanced error:
            // clients know it by the status alone.
            let page = GatewayResponse(status: status, contentType: "text/html", body: ByteBuffer(string: Self.throttledPage), headers: headers)
            return (page, enhanced.code)
        }
        let format = ErrorFormat(api: api, accept: accept)
        let body = enhanced.render(format, trace: requestID, helpURL: configuration.helpURL)
        return (GatewayResponse(status: status, contentType: format.contentType, body: ByteBuffer(string: body), headers: headers), enhanced.code)
    }

    /// The body of a 429, an HTML page as the backend's throttle answers.
    static let throttledPage = "<html><head><title>429 Too Many Requests</title></head><body><h1>429 Too Many Requests</h1></body></html>\n"
}
