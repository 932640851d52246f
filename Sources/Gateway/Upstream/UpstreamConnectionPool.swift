import NIOCore
import NIOHTTP1
import NIOSSL

/// Idle keep-alive connections to the backends, one pool per event loop — the way nginx and
/// Envoy keep one per worker. A request's upstream connection lives on the event loop of its
/// client connection, so relaying between the two never leaves the thread and needs no locks.
///
/// Used only on its event loop (``UpstreamClient`` hands each loop its own).
final class UpstreamConnectionPool {
    /// How long an unused connection is kept before it is closed.
    static let idleTimeout: TimeAmount = .seconds(60)
    /// How often the idle connections are looked at, while there are any. One look for all
    /// instead of a timer per connection, which would be set and cancelled on every request.
    static let sweepInterval: TimeAmount = .seconds(5)
    /// The largest answer head read from a backend (header names and values, per field and in
    /// all): what the gateway takes in a request head (NIO's server default, 80 KiB of target and
    /// fields) plus 32 KiB. A backend that reflects a request's head into its answer once (an
    /// echo, a redirect's `Location`), with headers of its own, still gets through; an answer
    /// head beyond it fails that one request with `502 upstream_response_invalid` (as nginx
    /// answers 502 for a header over `proxy_buffer_size`) and is not held against the backend.
    static let responseHeadLimits: NIOHTTPDecoderLimitConfiguration = {
        let requestLimit = NIOHTTPDecoderLimitConfiguration().maxHeaderListSize
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = requestLimit + 32 * 1024
        limits.maxHeaderFieldSize = limits.maxHeaderListSize
        return limits
    }()

    let eventLoop: any EventLoop
    private let endpoints: [UpstreamEndpoint]
    private let tls: UpstreamTLS?
    private let connectTimeout: TimeAmount
    private let connector: any UpstreamConnector
    private let maxIdlePerEndpoint: Int
    /// Per endpoint, most recently used last (so the longest idle lead).
    private var idle: [[UpstreamConnection]]
    private var sweep: Scheduled<Void>?

    init(
        eventLoop: any EventLoop, endpoints: [UpstreamEndpoint], tls: UpstreamTLS?, connectTimeout: TimeAmount, maxIdlePerEndpoint: Int,
        connector: any UpstreamConnector
    ) {
        self.eventLoop = eventLoop
        self.connector = connector
        self.endpoints = endpoints
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.maxIdlePerEndpoint = maxIdlePerEndpoint
        idle = Array(repeating: [], count: endpoints.count)
    }

    /// A pooled open connection to the endpoint, most recently used first; closed ones are dropped.
    func takeIdle(_ index: Int) -> UpstreamConnection? {
        while let connection = idle[index].popLast() {
            if connection.isActive { return connection }
        }
        return nil
    }

    /// What every connection to an upstream carries below its own handler: TLS for an `https`
    /// endpoint, then HTTP/1.1 — the gateway's request encoder (``UpstreamRequestEncoder``) and
    /// NIOHTTP1's response decoder with the answer-head limits (``responseHeadLimits``). Shared by
    /// the request pool and the health checks' probes, so a probe speaks to the upstream as requests
    /// do. Returns the encoder (a trip names its endpoint to it).
    @discardableResult
    static func addClientHandlers(
        _ pipeline: ChannelPipeline.SynchronousOperations, tls: NIOSSLContext?, endpoint: UpstreamEndpoint
    ) throws -> UpstreamRequestEncoder {
        if let tls {
            try pipeline.addHandler(UpstreamCertificateName.handler(context: tls, host: endpoint.host, serverName: endpoint.serverName))
        }
        let encoder = UpstreamRequestEncoder()
        let decoder = HTTPResponseDecoder(
            leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop, limitConfiguration: responseHeadLimits)
        try pipeline.addHandler(encoder)
        try pipeline.addHandler(ByteToMessageHandler(decoder))
        return encoder
    }

    /// Opens a new connection to the endpoint; `completion` runs on this event loop.
    func connect(_ index: Int, _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void) {
        let endpoint = endpoints[index]
        let tls = endpoint.usesTLS ? self.tls?.context : nil
        connector.connect(to: endpoint, index: index, tls: tls, timeout: connectTimeout, on: eventLoop, completion)
    }

    /// Takes back a connection after a complete exchange (or closes it when the pool is full).
    func release(_ connection: UpstreamConnection) {
        connection.trip = nil
        connection.resumeReading()
        guard connection.isActive, idle[connection.endpointIndex].count < maxIdlePerEndpoint else {
            connection.close()
            return
        }
        connection.reused = true
        connection.idleSince = eventLoop.now
        idle[connection.endpointIndex].append(connection)
        if sweep == nil { scheduleSweep() }
    }

    private func scheduleSweep() {
        sweep = eventLoop.assumeIsolated().scheduleTask(in: Self.sweepInterval) { [weak self] in
            self?.closeStale()
        }
    }

    /// Closes the connections idle past ``idleTimeout``; looks again later while any are left.
    private func closeStale() {
        sweep = nil
        let cutoff = eventLoop.now - Self.idleTimeout
        for index in idle.indices {
            let stale = idle[index].prefix { $0.idleSince <= cutoff || !$0.isActive }
            for connection in stale { connection.close() }
            idle[index].removeFirst(stale.count)
        }
        if idle.contains(where: { !$0.isEmpty }) { scheduleSweep() }
    }

    /// Closes every idle connection (at shutdown).
    func closeAll() {
        sweep?.cancel()
        sweep = nil
        for connections in idle {
            for connection in connections { connection.close() }
        }
        idle = Array(repeating: [], count: endpoints.count)
    }
}
