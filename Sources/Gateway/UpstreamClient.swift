import AsyncHTTPClient
import Dispatch
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Sends requests to the backends: one shared AsyncHTTPClient (keep-alive pool per upstream),
/// round-robin over the healthy upstreams, passive health, and the timeout mapping the gateway
/// documents (connect failure → 502 `upstream_unavailable`, read/total timeout → 504
/// `upstream_timeout`).
///
/// Retries: only when the connection could not be made, and only when the body is in memory
/// (the exchange is not idempotent, so a request that may have reached a backend is never sent
/// twice); the next healthy upstream gets it.
public final class UpstreamClient: Sendable {
    public let endpoints: [UpstreamEndpoint]
    private let client: HTTPClient
    private let cursor = Atomic<Int>(0)
    private let coolDownNanos: UInt64
    private let totalTimeout: TimeAmount
    private let metrics: GatewayMetrics

    public init(configuration: GatewayConfiguration, metrics: GatewayMetrics, eventLoopGroup: any EventLoopGroup) {
        endpoints = configuration.upstreams.map(UpstreamEndpoint.init(baseURL:))
        var settings = HTTPClient.Configuration()
        settings.timeout = .init(connect: Self.amount(configuration.connectTimeout), read: Self.amount(configuration.readTimeout))
        settings.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.poolSize)
        // Fail fast on a refused connection and let the next upstream take the request, instead of
        // AsyncHTTPClient's own back-off retries until the connect timeout.
        settings.connectionPool.retryConnectionEstablishment = false
        settings.redirectConfiguration = .disallow
        settings.decompression = .disabled
        settings.httpVersion = .http1Only
        // No distributed tracing is configured; without a tracer AsyncHTTPClient skips building
        // span attributes for every request (measurable at thousands of exchanges per second).
        settings.tracing.tracer = nil
        client = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: settings)
        coolDownNanos = UInt64(configuration.upstreamCooldown * 1e9)
        totalTimeout = Self.amount(configuration.totalTimeout)
        self.metrics = metrics
    }

    static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1e9))
    }

    /// Upstreams not cooling down.
    public var healthyCount: Int {
        let now = DispatchTime.now().uptimeNanoseconds
        return endpoints.count { $0.isHealthy(at: now) }
    }

    /// Sends `method pathAndQuery` with `headers` and `body`. `retryable` says the body can be
    /// sent again (it is in memory). `clientBodyFailed` tells, after a failure, whether reading
    /// the client's streamed body failed first: then the client is at fault (`400
    /// malformed_request`) and the upstream's health and metrics are untouched.
    public func send(
        method: HTTPMethod, pathAndQuery: String, headers: HTTPHeaders, body: HTTPClientRequest.Body?, retryable: Bool,
        clientBodyFailed: () -> Bool = { false }, logger: Logger
    ) async throws(GatewayError) -> HTTPClientResponse {
        let order = pickOrder()
        var lastFailure = "no upstream configured"
        for (attempt, endpoint) in order.enumerated() {
            var request = HTTPClientRequest(url: endpoint.baseURL + pathAndQuery)
            request.method = method
            request.headers = headers
            request.body = body
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                let response = try await client.execute(request, timeout: totalTimeout, logger: logger)
                endpoint.markHealthy()
                metrics.upstreamLatency(endpoint: endpoint.baseURL, nanos: DispatchTime.now().uptimeNanoseconds - started)
                return response
            } catch {
                let failure = UpstreamFailure(error)
                if failure.kind == .request { throw failure.gatewayError }
                if clientBodyFailed() { throw GatewayError.unreadableBody }
                metrics.upstreamError(endpoint: endpoint.baseURL, kind: failure.kind)
                logger.warning("upstream request failed", metadata: [
                    "upstream": .string(endpoint.baseURL), "failure": .string(failure.kind.rawValue), "attempt": .stringConvertible(attempt + 1),
                ])
                if failure.kind.marksUnhealthy { endpoint.markFailed(coolDownNanos: coolDownNanos) }
                lastFailure = failure.summary
                guard failure.kind == .connect, retryable else { throw failure.gatewayError }
            }
        }
        throw GatewayError.upstreamUnavailable(lastFailure)
    }

    /// The healthy upstreams starting at the round-robin cursor; when none is healthy, all of
    /// them (a cooling upstream is better than certain failure).
    func pickOrder() -> [UpstreamEndpoint] {
        let count = endpoints.count
        guard count > 1 else { return endpoints }
        let start = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        let now = DispatchTime.now().uptimeNanoseconds
        var order: [UpstreamEndpoint] = []
        order.reserveCapacity(count)
        for offset in 0..<count {
            let endpoint = endpoints[(start &+ offset) % count]
            if endpoint.isHealthy(at: now) { order.append(endpoint) }
        }
        return order.isEmpty ? endpoints : order
    }

    public func shutdown() async {
        try? await client.shutdown()
    }
}
