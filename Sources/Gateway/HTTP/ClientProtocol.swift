import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The protocol a client connection speaks once set up, and the handlers that serve it. Every
/// request, of either protocol, is answered by a ``RequestDriver``: one per HTTP/1.1 connection
/// (``GatewayConnectionHandler``), one per HTTP/2 stream (``HTTP2Stream``, served at the
/// connection by ``HTTP2Streams``), so an HTTP/2 request goes through the same responder,
/// verification, replay store and upstream trip as an HTTP/1.1 one (upstream stays HTTP/1.1
/// keep-alive).
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
                GatewayConnectionHandler(core: core, eventLoop: channel.eventLoop, tls: tls))
        case .http2, .h2c:
            let configuration = core.configuration
            let streams = HTTP2Streams(core: core, channel: channel, tls: tls)
            let management = NIOHTTP2ServerConnectionManagementHandler(
                eventLoop: channel.eventLoop, configuration: HTTP2Limits.management(configuration))
            let guardHandler = HTTP2ConnectionGuard(
                metrics: core.metrics.connections, streams: streams, idle: TimeAmount(seconds: configuration.idleTimeout),
                grace: TimeAmount(seconds: configuration.totalTimeout + 1))
            try pipeline.addHandler(HTTP2FlushCoalescer())
            try pipeline.addHandler(
                NIOHTTP2Handler(mode: .server, connectionConfiguration: HTTP2Limits.connection, streamConfiguration: HTTP2Limits.stream))
            streams.events = HTTP2StreamEvents(management: management.http2StreamDelegate, guardHandler: guardHandler, channel: channel)
            try pipeline.addHandler(guardHandler)
            try pipeline.addHandler(streams)
            try pipeline.addHandler(management)
        }
    }
}
