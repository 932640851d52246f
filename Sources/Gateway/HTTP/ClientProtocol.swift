import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The protocol a client connection speaks once set up, and the handlers that serve it. Every
/// request, of either protocol, is answered by a ``GatewayConnectionHandler``: one per HTTP/1.1
/// connection, one per HTTP/2 stream (behind ``HTTP2RequestTranslator``'s translation of the
/// stream to HTTP/1-style parts), so an HTTP/2 request goes through the same responder, verification,
/// replay store and upstream trip as an HTTP/1.1 one (upstream stays HTTP/1.1 keep-alive).
enum ClientProtocol {
    case http1
    /// HTTP/2 over TLS (ALPN `h2`).
    case http2
    /// HTTP/2 with prior knowledge on a plain listener (`h2c`).
    case h2c

    var label: String {
        switch self {
        case .http1: "http1.1"
        case .http2: "h2"
        case .h2c: "h2c"
        }
    }

    /// Adds the handlers of this protocol at the end of `pipeline` (on the channel's loop).
    /// - Parameter tls: the connection's TLS (its version, the client's verified certificate), given to each request.
    func configure(
        _ channel: any Channel, on pipeline: ChannelPipeline.SynchronousOperations, core: GatewayCore, tls: TLSSession?
    ) throws {
        core.metrics.connections.opened(protocol: label)
        switch self {
        case .http1:
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try pipeline.addHandler(
                GatewayConnectionHandler(core: core, pool: core.upstream.pool(on: channel.eventLoop), tls: tls))
        case .http2, .h2c:
            let configuration = core.configuration
            let budget = HTTP2AnswerBudget(
                limit: configuration.http2AnswerBudget, stall: TimeAmount(seconds: configuration.totalTimeout), eventLoop: channel.eventLoop)
            let shared = HTTP2Streams(
                budget: budget, clock: HTTP2StreamClock(eventLoop: channel.eventLoop), caps: core.connections,
                client: ConnectionCaps.key(of: channel.remoteAddress), metrics: core.metrics.connections)
            let streams = NIOLoopBound(shared, eventLoop: channel.eventLoop)
            let management = NIOHTTP2ServerConnectionManagementHandler(
                eventLoop: channel.eventLoop, configuration: HTTP2Limits.management(configuration))
            let guardHandler = HTTP2ConnectionGuard(
                metrics: core.metrics.connections, streams: shared, idle: TimeAmount(seconds: configuration.idleTimeout),
                grace: TimeAmount(seconds: configuration.totalTimeout + 1))
            let events = HTTP2StreamEvents(
                management: management.http2StreamDelegate, guardHandler: NIOLoopBound(guardHandler, eventLoop: channel.eventLoop))
            try pipeline.addHandler(HTTP2FlushCoalescer())
            _ = try pipeline.configureHTTP2Pipeline(
                mode: .server, connectionConfiguration: HTTP2Limits.connection, streamConfiguration: HTTP2Limits.stream,
                streamDelegate: events
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    let streamPipeline = stream.pipeline.syncOperations
                    try streamPipeline.addHandler(HTTP2RequestTranslator(streams: streams.value))
                    try streamPipeline.addHandler(
                        GatewayConnectionHandler(
                            core: core, pool: core.upstream.pool(on: stream.eventLoop), tls: tls, streams: streams.value))
                }
            }
            try pipeline.addHandler(management)
            try pipeline.addHandler(guardHandler, position: .before(management))
        }
    }
}
