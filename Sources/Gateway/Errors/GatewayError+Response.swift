import NIOCore
import ServerSupport

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
