import NIOCore
import NIOHTTP1
import ServerSupport

/// A whole answer of the gateway's own (a local endpoint's, or a refusal): what the connection
/// writes, with `Content-Length`, `X-Request-Id` and, when it closes, `Connection: close` added.
struct GatewayResponse {
    var status: Int
    var contentType: String
    var body: ByteBuffer
    /// Further headers, in order (`Allow`, `Retry-After`).
    var headers: [(String, String)] = []

    static func json(status: Int, _ json: String) -> GatewayResponse {
        GatewayResponse(status: status, contentType: "application/json", body: ByteBuffer(string: json))
    }
}

/// Decides, once per request head, how the request is answered (hummingbird's `RouterResponder`
/// in spirit): its target parsed once (routed on, and forwarded, in this one spelling — see
/// ``RequestTarget``), its fields and framing checked, its route classified, and then one
/// ``Decision``: a local answer (``LocalEndpoints``), a refusal, a pass-through trip, or a token
/// exchange to run (``ExchangeFlow``). The connection carries the decision out; nothing here
/// holds or calls it.
struct GatewayResponder {
    /// How a request is answered.
    enum Decision {
        /// A whole answer of the gateway's own.
        case answer(GatewayResponse)
        /// A refusal; `closing`: close after it (a body the gateway will not read follows);
        /// `headers` go before the refusal's own (`Allow`).
        case refuse(GatewayError, closing: Bool, headers: [(String, String)])
        /// To the backend with this head; `streamsBody`: the client's body follows as it arrives
        /// (else the request has none).
        case passThrough(HTTPRequestHead, streamsBody: Bool)
        /// A token exchange admitted on its head: its body goes to the flow, which decides the rest.
        case exchange(ExchangeFlow)

        static func refuse(_ error: GatewayError, closing: Bool = false) -> Decision {
            .refuse(error, closing: closing, headers: [])
        }
    }

    let core: GatewayCore
    /// Where the admission and the throttle report (the responder counts nothing itself).
    private let observer: RequestObserver
    private let local: LocalEndpoints
    /// The probe listener's (`plain-port`): what is not an operational endpoint is refused.
    private let probesOnly: Bool

    init(core: GatewayCore, probesOnly: Bool = false) {
        self.core = core
        observer = RequestObserver(core: core)
        self.probesOnly = probesOnly
        local = LocalEndpoints(core: core)
    }

    /// The decision for `request`, whose route, API and authority are set on it on the way.
    /// - Parameters:
    ///   - peer: the client's address, for `X-Forwarded-For` and the throttles' client key.
    ///   - eventLoop: the connection's, on which a shared store is asked.
    func respond(to request: InFlightRequest, peer: SocketAddress?, eventLoop: any EventLoop) -> Decision {
        let head = request.head
        let target: RequestTarget
        do throws(GatewayError) {
            let authority: String?
            (target, authority) = try RequestTarget.parse(requestLine: head.uri)
            let fields = try head.checkFields()
            // HTTP/1.1's parser reads nothing after an upgrade request: answered, then closed.
            if fields.endsConnection { request.endsConnection = true }
            request.authority = authority ?? fields.host
        } catch {
            request.route = .invalidTarget
            return .refuse(error, closing: head.method == .CONNECT || head.headers.contains(name: "upgrade"))
        }
        request.api = BackendAPI(path: target.path)
        guard head.hasPlainFraming else {
            return .refuse(GatewayError(status: 400, code: .invalidRequest, message: "the only transfer coding accepted is chunked"), closing: true)
        }
        let route = GatewayRoute.classify(method: head.method, path: target.path)
        if probesOnly && !route.isOperational {
            request.route = route
            return .refuse(.tlsRequired(port: core.configuration.port), closing: request.hasBody)
        }
        // A token check without a body is counted as the pass-through it is.
        request.route = route == .tokenCheck && !request.hasBody ? .proxy : route
        return decide(request, route: route, target: target, peer: peer, eventLoop: eventLoop)
    }

    private func decide(
        _ request: InFlightRequest, route: GatewayRoute, target: RequestTarget, peer: SocketAddress?, eventLoop: any EventLoop
    )
        -> Decision
    {
        let head = request.head
        switch route {
        case .healthz:
            return .answer(local.health())
        case .readyz:
            return .answer(local.readiness(on: eventLoop))
        case .metrics:
            return .answer(local.metrics())
        case .exchangeV1, .exchangeV2:
            // Before anything of the exchange is read or checked: a throttled client costs no verification.
            if let refusal = throttled(request, by: core.exchangeThrottle, peer: peer) {
                return .refuse(refusal, closing: request.hasBody)
            }
            defer { observer.note(.admitted, for: request) }
            do throws(GatewayError) {
                let flow = try ExchangeFlow(
                    request: request, target: target, partner: route == .exchangeV2, peer: peer, eventLoop: eventLoop, core: core)
                // Shared buckets: asked of Redis while the body arrives, answered before any verification.
                if let shared = core.sharedThrottle, let client = clientKey(request, peer: peer) {
                    flow.throttleVerdict = shared.take(client, on: eventLoop)
                }
                return .exchange(flow)
            } catch {
                return .refuse(error, closing: request.hasBody)
            }
        case .exchangeMethodNotAllowed(let allow):
            return .refuse(.methodNotAllowed(head.method.rawValue), closing: false, headers: [("Allow", allow)])
        case .tokenCheck:
            if request.hasBody { return .refuse(GatewayError(status: 400, code: .invalidRequest, message: "a token check carries no body")) }
            return passThrough(request, target: target, peer: peer)
        case .partnerStatus:
            if let refusal = ExchangeAdmission.connectionRefusal(head.headers, needed: [PartnerStatusHeader.name]) {
                return .refuse(refusal, closing: request.hasBody)
            }
            ExchangeAdmission.readPartnerStatus(head.headers, route: route, observer: observer)
            return passThrough(request, target: target, peer: peer)
        case .proxy:
            if head.method == .TRACE && request.hasBody {
                return .refuse(GatewayError(status: 400, code: .invalidRequest, message: "a TRACE request carries no body"))
            }
            return passThrough(request, target: target, peer: peer)
        case .invalidTarget:
            return .refuse(
                GatewayError(
                    status: 400, code: .invalidRequestTarget,
                    message: "invalid request target: a look-alike of a token-exchange path, or more segments after one"),
                closing: request.hasBody)
        }
    }

    /// The refusal of a request whose client has no token left in `throttle`, counted in
    /// `samlgate_throttled_total{route}`; `nil` when it may go on (or no throttle is set).
    private func throttled(_ request: InFlightRequest, by throttle: ClientThrottle?, peer: SocketAddress?) -> GatewayError? {
        guard let throttle, let client = clientKey(request, peer: peer), let wait = throttle.take(client) else { return nil }
        observer.note(.throttled, for: request)
        return .throttled(wait: wait)
    }

    /// Whose bucket a request takes from: its verified client certificate's, else its address's.
    private func clientKey(_ request: InFlightRequest, peer: SocketAddress?) -> ClientKey? {
        request.tls?.certificate?.throttleKey ?? ClientKey(peer: peer, headers: request.head.headers, trusting: core.trustedProxies)
    }

    /// Streamed to the backend as it comes, the answer streamed back (after the pass-through
    /// throttle, when one is set).
    private func passThrough(_ request: InFlightRequest, target: RequestTarget, peer: SocketAddress?) -> Decision {
        if let refusal = throttled(request, by: core.passThroughThrottle, peer: peer) {
            return .refuse(refusal, closing: request.hasBody)
        }
        return .passThrough(
            UpstreamRequestHead.passThrough(request, target: target, peer: peer, core: core, observer: observer), streamsBody: request.hasBody)
    }
}

/// The gateway's own endpoints, answered without the backend: `/healthz`, `/readyz`, `/metrics`.
struct LocalEndpoints {
    let core: GatewayCore

    /// The process is up and serving.
    func health() -> GatewayResponse {
        .json(status: 200, "{\"status\":\"up\"}")
    }

    /// Ready while at least one MVPD's trust is usable and one upstream is healthy.
    /// - Parameter eventLoop: the connection's, on which a shared replay store is probed.
    func readiness(on eventLoop: any EventLoop) -> GatewayResponse {
        let store = core.trustStore.current
        let mvpds = store.providers.count, mvpdsReady = store.readyCount()
        let healthy = core.upstream.healthyCount
        let ready = mvpdsReady > 0 && healthy > 0
        var body = JSONLine()
        body.add("status", ready ? "ready" : "not_ready")
        body.add("mvpds", mvpds)
        body.add("mvpdsReady", mvpdsReady)
        body.add("upstreamsHealthy", healthy)
        body.add("upstreams", core.upstream.endpoints.count)
        // Reported, not required: the MVPDs whose refusals are forwarded (report-only).
        body.add("mode", core.configuration.mode.rawValue)
        body.add("reportOnly", core.reportOnlyMVPDs(in: store))
        // Reported, not required: with Redis down every replica would leave the load balancer at
        // once, pass-through traffic with it (the failure policy answers the exchanges).
        if let shared = core.sharedReplayStore {
            body.add("replayStore", shared.readiness(probingOn: eventLoop))
            shared.addTopology(to: &body)
        } else {
            body.add("replayStore", "memory")
        }
        // Reported, not required: the throttle fails open, so a Redis that refuses its script
        // leaves the replica serving with every exchange unthrottled; `degraded` (with Redis's
        // error word) is where that shows, until a script call is answered again.
        if let shared = core.sharedThrottle {
            let refusal = shared.refusal
            body.add("throttle", refusal == nil ? "shared" : "degraded")
            if let refusal { body.add("throttleRefusal", refusal) }
        } else {
            body.add("throttle", core.exchangeThrottle == nil ? "off" : "memory")
        }
        // Reported, not required: a refused reload leaves the previous certificate serving. Its
        // reason (file paths, the TLS library's words) goes to the log line, not to whoever can
        // reach the probe.
        if let tls = core.tls {
            body.add("tls", tls.reloadFailure == nil ? "ok" : "reload_failed")
            body.add("tlsNotAfter", tls.notAfter.ISO8601Format())
        }
        if let tls = core.upstream.tls, tls.readsFiles {
            body.add("upstreamTLS", tls.reloadFailure == nil ? "ok" : "reload_failed")
        }
        return .json(status: ready ? 200 : 503, body.json)
    }

    /// The Prometheus exposition.
    func metrics() -> GatewayResponse {
        let state = PointInTimeGauges.State(
            workers: core.pool.threadCount, queueLimit: core.pool.queueLimit, upstreams: core.upstream.endpoints.count,
            upstreamsHealthy: core.upstream.healthyCount, openConnections: core.connections.open,
            replayStoreUp: core.sharedReplayStore?.isUp)
        let bytes = core.metrics.exposition(queueDepth: core.pool.queueDepth, state: state)
        return GatewayResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: ByteBuffer(bytes: bytes))
    }
}
