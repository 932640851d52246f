import Workers
import ServerSupport
import AsyncHTTPClient
import Dispatch
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SAMLVerification

/// Routes every request: the two token-exchange routes do the SAML work, `/healthz`,
/// `/readyz` and `/metrics` answer locally, everything else is proxied unchanged.
public struct GatewayResponder: HTTPResponder {
    public typealias Context = GatewayRequestContext
    let core: GatewayCore

    public func respond(to request: Request, context: Context) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let requestID = RequestID.make(incoming: request.headers[.requestID])
        var logger = core.logger
        logger[metadataKey: "request_id"] = .string(requestID)
        let route: String
        let response: Response
        do throws(GatewayError) {
            // Parsed once: routed on, and forwarded, in this one spelling (see ``RequestTarget``).
            let target = try RequestTarget.parse(request.head.path ?? "")
            (route, response) = await dispatch(request, target: target, context: context, requestID: requestID, logger: logger)
        } catch {
            route = "invalid_target"
            response = failure(error, requestID: requestID, logger: logger)
        }
        let status = response.status.code
        core.metrics.request(route: route, status: status)
        if route != "metrics" && route != "healthz" && route != "readyz" {
            let elapsed = DispatchTime.now().uptimeNanoseconds - started
            core.metrics.stage("total", nanos: elapsed)
            logger.info("request", metadata: [
                "route": .string(route), "method": .string(request.method.rawValue), "status": .stringConvertible(status),
                "duration_us": .stringConvertible(elapsed / 1000),
            ])
        }
        return response
    }

    /// The route of a request with a valid target, and its answer.
    func dispatch(_ request: Request, target: RequestTarget, context: Context, requestID: String, logger: Logger) async -> (String, Response) {
        switch GatewayRoute.classify(method: request.method, path: target.path) {
        case .healthz:
            return ("healthz", json(200, "{\"status\":\"up\"}", requestID: requestID))
        case .readyz:
            return ("readyz", readiness(requestID: requestID))
        case .metrics:
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            let bytes = core.metrics.exposition(queueDepth: core.pool.queueDepth)
            return ("metrics", Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes))))
        case .exchangeV1:
            return (ExchangeRoute.v1Label, await exchange(request, target: target, context: context, partner: false, requestID: requestID, logger: logger))
        case .exchangeV2:
            return (ExchangeRoute.v2Label, await exchange(request, target: target, context: context, partner: true, requestID: requestID, logger: logger))
        case .exchangeMethodNotAllowed(let allow):
            var response = failure(.methodNotAllowed(request.method.rawValue), requestID: requestID, logger: logger)
            response.headers[.allow] = allow
            return ("exchange_method", response)
        case .tokenCheck:
            if request.headers[.transferEncoding] != nil || (request.headers[.contentLength].flatMap(Int.init) ?? 0) > 0 {
                return ("v1_token_check", failure(GatewayError(status: 400, code: "invalid_request", message: "a token check carries no body"),
                                                  requestID: requestID, logger: logger))
            }
            return ("proxy", await proxy(request, target: target, context: context, requestID: requestID, logger: logger))
        case .partnerStatus(let partnerRoute):
            countPartnerStatus(request, route: partnerRoute)
            return (partnerRoute.label, await proxy(request, target: target, context: context, requestID: requestID, logger: logger))
        case .proxy:
            return ("proxy", await proxy(request, target: target, context: context, requestID: requestID, logger: logger))
        }
    }

    // MARK: token exchange

    /// - Parameter partner: the v2 partner SSO route (the MVPD comes from the partner status).
    func exchange(_ request: Request, target: RequestTarget, context: Context, partner: Bool, requestID: String, logger: Logger) async -> Response {
        do throws(GatewayError) {
            try Self.checkExchangeRequest(request.headers, target: target, partner: partner)
            // One trust snapshot for the whole request, so a reload cannot split it.
            let store = core.trustStore.current
            let route = partner ? try partnerRoute(request, store: store) : .v1
            let body = try await collect(request)
            let queued = DispatchTime.now().uptimeNanoseconds
            let processor = core.processor
            let outcome: Result<PreparedExchange, GatewayError>
            do {
                outcome = try await core.pool.run { processor.prepare(body: body, route: route, store: store) }
            } catch {
                throw GatewayError.overloaded(shuttingDown: error == .stopped)
            }
            let prepared = try outcome.get()
            core.metrics.exchange(prepared)
            core.metrics.stage("queue", nanos: DispatchTime.now().uptimeNanoseconds - queued
                - prepared.parseNanos - prepared.verifyNanos - prepared.encodeNanos)
            var headers = ProxyHeaders.upstreamRequest(
                request.headers, authority: request.head.authority, peer: context.remoteAddress, trusting: core.trustedProxies, requestID: requestID)
            // The body is the gateway's own: plain form encoding, whatever parameters the client's
            // type carried (a charset the backend would decode with differently).
            headers.replaceOrAdd(name: "Content-Type", value: Self.formType)
            let upstream = try await core.upstream.send(
                method: .POST, pathAndQuery: target.path, headers: headers,
                body: .bytes(prepared.upstreamBody), retryable: true, logger: logger)
            return relay(upstream, requestID: requestID)
        } catch {
            if error.isVerificationFailure { core.metrics.verificationFailure(code: error.code) }
            return failure(error, requestID: requestID, logger: logger)
        }
    }

    static let formType = "application/x-www-form-urlencoded"

    /// What an exchange request must look like before its body is read: no query (a backend
    /// reading parameters from the query before the body would use unverified values), exactly
    /// one form `Content-Type` and no `Content-Encoding` (the gateway parses the body as plain
    /// form data, so must the backend), and each header that decides the v2 identity once (a
    /// backend may read the other copy).
    static func checkExchangeRequest(_ headers: HTTPFields, target: RequestTarget, partner: Bool) throws(GatewayError) {
        if target.query != nil {
            throw GatewayError(status: 400, code: RequestTarget.errorCode,
                               message: "invalid request target: the token-exchange routes take no query string (parameters go in the body)")
        }
        let types = headers[values: .contentType]
        let mediaType = types.first?.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard types.count == 1, mediaType == formType, headers[.contentEncoding] == nil else {
            throw GatewayError(status: 415, code: "unsupported_media_type",
                               message: "the body must be application/x-www-form-urlencoded, given once, without Content-Encoding")
        }
        guard partner else { return }
        for name in [HeaderField.Name.authorization, .deviceIdentifier, .partnerFrameworkStatus] where headers[values: name].count > 1 {
            throw GatewayError(status: 400, code: "duplicate_header", message: "the header \(name.rawName) is given more than once",
                               details: [("header", .string(name.rawName))])
        }
    }

    /// Counts the partner status of a forwarded v2 route (see ``PartnerStatusRoute``).
    func countPartnerStatus(_ request: Request, route: PartnerStatusRoute) {
        guard let value = request.headers[.partnerFrameworkStatus], !value.isEmpty else {
            core.metrics.partnerStatus(route: route.label, verdict: "absent")
            return
        }
        let verdict = (try? PartnerFrameworkStatus.decode(header: value)).map { PartnerStatusHeader.label($0.verdict(now: Date())) }
        core.metrics.partnerStatus(route: route.label, verdict: verdict ?? "unreadable")
    }

    /// The v2 route's MVPD, from the required headers and the partner framework status.
    func partnerRoute(_ request: Request, store: TrustStore) throws(GatewayError) -> ExchangeRoute {
        if (request.headers[.partnerFrameworkStatus] ?? "").isEmpty {
            core.metrics.partnerStatus(route: ExchangeRoute.v2Label, verdict: "absent")
        }
        for name in [HeaderField.Name.authorization, .deviceIdentifier, .partnerFrameworkStatus]
        where (request.headers[name] ?? "").isEmpty {
            throw GatewayError.missingParameter(name.rawName)
        }
        let status: PartnerFrameworkStatus
        do throws(GatewayError) {
            status = try PartnerStatusHeader.decode(request.headers[.partnerFrameworkStatus]!)
        } catch {
            core.metrics.partnerStatus(route: ExchangeRoute.v2Label, verdict: "unreadable")
            throw error
        }
        let verdict = status.verdict(now: Date())
        core.metrics.partnerStatus(route: ExchangeRoute.v2Label, verdict: PartnerStatusHeader.label(verdict))
        return .v2(mvpd: try PartnerStatusHeader.mvpd(for: verdict, trustStore: store))
    }

    /// The body, refused with 413 past the limit (by `Content-Length` before reading a byte).
    func collect(_ request: Request) async throws(GatewayError) -> ByteBuffer {
        let limit = core.configuration.bodyLimit
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw GatewayError.bodyTooLarge(limit)
        }
        var collected = ByteBuffer()
        do {
            for try await part in request.body {
                guard collected.readableBytes + part.readableBytes <= limit else { throw GatewayError.bodyTooLarge(limit) }
                if collected.readableBytes == 0 { collected = part } else { var part = part; collected.writeBuffer(&part) }
            }
        } catch let error as GatewayError {
            throw error
        } catch {
            throw GatewayError.unreadableBody
        }
        return collected
    }

    // MARK: pass-through

    func proxy(_ request: Request, target: RequestTarget, context: Context, requestID: String, logger: Logger) async -> Response {
        let length = request.headers[.contentLength].flatMap(Int.init)
        let chunked = request.headers[.transferEncoding] != nil
        let forwarded = chunked || (length ?? 0) > 0 ? ForwardedRequestBody(request.body) : nil
        do throws(GatewayError) {
            let headers = ProxyHeaders.upstreamRequest(
                request.headers, authority: request.head.authority, peer: context.remoteAddress, trusting: core.trustedProxies, requestID: requestID)
            let body = forwarded.map { HTTPClientRequest.Body.stream($0, length: length.map { .known(Int64($0)) } ?? .unknown) }
            let upstream = try await core.upstream.send(
                method: HTTPMethod(rawValue: request.method.rawValue), pathAndQuery: target.forwarded, headers: headers,
                body: body, retryable: forwarded == nil, clientBodyFailed: { forwarded?.clientFailed ?? false }, logger: logger)
            return relay(upstream, requestID: requestID, forwarded: forwarded)
        } catch {
            // AsyncHTTPClient may still be reading the client's body for the failed request.
            await forwarded?.release()
            return failure(error, requestID: requestID, logger: logger)
        }
    }

    /// The upstream's answer, status and headers as they came (minus hop-by-hop), body streamed.
    /// - Parameter forwarded: the client's body as the upstream was reading it; released once the
    ///   answer is written (see ``ForwardedRequestBody``: the upstream may answer before reading it all).
    func relay(_ upstream: HTTPClientResponse, requestID: String, forwarded: ForwardedRequestBody? = nil) -> Response {
        let fields = ProxyHeaders.clientResponse(upstream.headers, requestID: requestID)
        let length = upstream.headers.first(name: "content-length").flatMap(Int.init)
        let status = HTTPResponse.Status(code: Int(upstream.status.code), reasonPhrase: upstream.status.reasonPhrase)
        guard let forwarded else {
            return Response(status: status, headers: fields, body: length == 0 ? ResponseBody() : ResponseBody(asyncSequence: upstream.body))
        }
        let body = ResponseBody { writer in
            do {
                if length != 0 { try await writer.write(upstream.body) }
                try await writer.finish(nil)
            } catch {
                await forwarded.release()
                throw error
            }
            // After the end is written: a client that waits for the whole answer before sending
            // the rest of its body would otherwise never unblock a read in progress.
            await forwarded.release()
        }
        return Response(status: status, headers: fields, body: body)
    }

    // MARK: local answers

    func readiness(requestID: String) -> Response {
        let mvpds = core.trustStore.current.providers.count
        let healthy = core.upstream.healthyCount
        let ready = mvpds > 0 && healthy > 0
        var body = JSONLine()
        body.add("status", ready ? "ready" : "not_ready")
        body.add("mvpds", mvpds)
        body.add("upstreamsHealthy", healthy)
        body.add("upstreams", core.upstream.endpoints.count)
        return json(ready ? 200 : 503, body.json, requestID: requestID)
    }

    func failure(_ error: GatewayError, requestID: String, logger: Logger) -> Response {
        core.metrics.error(code: error.code)
        logger.notice("refused", metadata: ["code": .string(error.code), "status": .stringConvertible(error.status)])
        var response = json(error.status, error.jsonBody(trace: requestID, helpURL: core.configuration.helpURL), requestID: requestID)
        if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    func json(_ status: Int, _ text: String, requestID: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.requestID] = requestID
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
