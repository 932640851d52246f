import NIOCore
import ServerSupport

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
