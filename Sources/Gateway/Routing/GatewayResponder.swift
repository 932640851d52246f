import Dispatch
import NIOCore
import NIOHTTP1

/// Answers each routed request (hummingbird's `RouterResponder` in spirit): the connection hands
/// it the request with its route, and it answers locally (``LocalEndpoints``), refuses, admits a
/// token exchange (``ExchangeFlow``), or passes the request through to the backend.
struct GatewayResponder {
    let core: GatewayCore
    private let local: LocalEndpoints

    init(core: GatewayCore) {
        self.core = core
        local = LocalEndpoints(core: core)
    }

    func respond(to request: InFlightRequest, route: GatewayRoute, target: RequestTarget, on connection: GatewayConnectionHandler) {
        let head = request.head
        switch route {
        case .healthz:
            connection.answer(local.health())
        case .readyz:
            connection.answer(local.readiness(on: connection.eventLoop))
        case .metrics:
            connection.answer(local.metrics())
        case .exchangeV1, .exchangeV2:
            // Before anything of the exchange is read or checked: a throttled client costs no verification.
            if let refusal = throttled(request, by: core.exchangeThrottle, on: connection) {
                connection.refuse(refusal, closing: request.hasBody)
                return
            }
            do throws(GatewayError) {
                let flow = try ExchangeFlow(head: head, target: target, partner: route == .exchangeV2, connection: connection, core: core)
                // Shared buckets: asked of Redis while the body arrives, answered before any verification.
                if let shared = core.sharedThrottle,
                    let client = ClientKey(peer: connection.peer, headers: head.headers, trusting: core.trustedProxies)
                {
                    flow.throttleVerdict = shared.take(client, on: connection.eventLoop)
                }
                admissionSpan(request)
                connection.collect(for: flow)
            } catch {
                admissionSpan(request)
                connection.refuse(error, closing: request.hasBody)
            }
        case .exchangeMethodNotAllowed(let allow):
            connection.refuse(.methodNotAllowed(head.method.rawValue), extraHeaders: [("Allow", allow)])
        case .tokenCheck:
            if request.hasBody {
                connection.refuse(GatewayError(status: 400, code: .invalidRequest, message: "a token check carries no body"))
            } else {
                passThrough(request, target: target, on: connection)
            }
        case .partnerStatus:
            if let refusal = ExchangeAdmission.connectionRefusal(head.headers, needed: [PartnerStatusHeader.name]) {
                connection.refuse(refusal, closing: request.hasBody)
                return
            }
            ExchangeAdmission.readPartnerStatus(head.headers, route: route, metrics: core.metrics)
            passThrough(request, target: target, on: connection)
        case .proxy:
            if head.method == .TRACE && request.hasBody {
                connection.refuse(GatewayError(status: 400, code: .invalidRequest, message: "a TRACE request carries no body"))
            } else {
                passThrough(request, target: target, on: connection)
            }
        case .invalidTarget:
            connection.refuse(
                GatewayError(
                    status: 400, code: .invalidRequestTarget,
                    message: "invalid request target: a look-alike of a token-exchange path, or more segments after one"),
                closing: request.hasBody)
        }
    }

    /// An exchange's first stage: its head checked (``ExchangeAdmission``), from the head's arrival.
    private func admissionSpan(_ request: InFlightRequest) {
        guard let span = request.recordingSpan else { return }
        span.stage("admission", from: request.started, to: DispatchTime.now().uptimeNanoseconds, attributes: [])
    }

    /// The refusal of a request whose client has no token left in `throttle`, counted in
    /// `samlgate_throttled_total{route}`; `nil` when it may go on (or no throttle is set).
    private func throttled(_ request: InFlightRequest, by throttle: ClientThrottle?, on connection: GatewayConnectionHandler) -> GatewayError? {
        guard let throttle, let client = ClientKey(peer: connection.peer, headers: request.head.headers, trusting: core.trustedProxies),
            let wait = throttle.take(client)
        else { return nil }
        core.metrics.throttled(route: request.routeLabel)
        return .throttled(wait: wait)
    }

    /// Streamed to the backend as it comes, the answer streamed back (after the pass-through
    /// throttle, when one is set).
    private func passThrough(_ request: InFlightRequest, target: RequestTarget, on connection: GatewayConnectionHandler) {
        if let refusal = throttled(request, by: core.passThroughThrottle, on: connection) {
            connection.refuse(refusal, closing: request.hasBody)
            return
        }
        let head = UpstreamRequestHead.passThrough(request, target: target, peer: connection.peer, core: core)
        connection.startTrip(head, body: request.hasBody ? nil : ByteBuffer())
    }
}
