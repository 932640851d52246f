import Logging
import NIOCore
import ServerSupport

/// Every refusal of the gateway is written here (hummingbird's `HTTPResponseError` shape): the
/// backend's enhanced error for the case, counted and logged under samlgate's own reason.
extension GatewayError {
    /// The answer to a request refused with this error, after counting it in
    /// `samlgate_errors_total{code}` and logging the `refused` line.
    /// - Parameters:
    ///   - api: the vocabulary of the answer (the request's API, or the current one when the
    ///     request could not be read).
    ///   - exchange: the request is a token exchange (see ``answer(api:exchange:showReason:)``).
    ///   - accept: the client's `Accept`, which chooses XML on `/api/v1/…`.
    /// - Parameter traceID: the request's W3C trace, for the log line (none for a head that never arrived whole).
    func response(requestID: String, traceID: String?, api: BackendAPI, exchange: Bool, accept: String?, core: GatewayCore) -> GatewayResponse {
        let (status, enhanced) = answer(api: api, exchange: exchange, showReason: core.configuration.errorDetails == .reason)
        core.metrics.error(code: code.rawValue)
        // Made inside the log call (an autoclosure): nothing is built when `notice` is filtered out.
        core.logger.notice("refused", metadata: refusedMetadata(requestID: requestID, traceID: traceID, status: status, backendCode: enhanced.code))
        var headers: [(String, String)] = []
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if code == .throttled {
            // The backend's throttle answers with its proxy's HTML page, not an enhanced error:
            // clients know it by the status alone.
            return GatewayResponse(status: status, contentType: "text/html", body: ByteBuffer(string: Self.throttledPage), headers: headers)
        }
        let format = ErrorFormat(api: api, accept: accept)
        let body = enhanced.render(format, trace: requestID, helpURL: core.configuration.helpURL)
        return GatewayResponse(status: status, contentType: format.contentType, body: ByteBuffer(string: body), headers: headers)
    }

    /// The body of a 429, an HTML page as the backend's throttle answers.
    static let throttledPage = "<html><head><title>429 Too Many Requests</title></head><body><h1>429 Too Many Requests</h1></body></html>\n"

    private func refusedMetadata(requestID: String, traceID: String?, status: Int, backendCode: BackendErrorCode) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "request_id": .string(requestID), "code": .string(code.rawValue), "status": .stringConvertible(status),
            "backend_code": .string(backendCode.rawValue), "raised_at": .stringConvertible(location),
        ]
        if let traceID { metadata["trace_id"] = .string(traceID) }
        return metadata
    }
}
