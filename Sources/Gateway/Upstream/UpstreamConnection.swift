import NIOCore
import NIOHTTP1
import NIOSSL

/// One keep-alive HTTP/1.1 connection to a backend: the last handler of its channel, used by one
/// ``UpstreamTrip`` at a time and kept in its event loop's ``UpstreamConnectionPool`` between trips.
///
/// It holds back the channel's reads while the client cannot take more of the answer
/// (``pauseReading()``), which is what keeps a large answer from piling up in memory.
final class UpstreamConnection: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    let endpointIndex: Int
    /// The trip using the connection; `nil` while it is idle in the pool.
    weak var trip: UpstreamTrip?
    /// When the pool took it back (its idle connections are closed by age, see ``UpstreamConnectionPool``).
    var idleSince: NIODeadline = .distantFuture
    /// Served at least one complete exchange (so a failure may be a stale keep-alive).
    var reused = false
    private var context: ChannelHandlerContext?
    private var reads = ReadGate()
    private let encoder: UpstreamRequestEncoder

    init(endpointIndex: Int, encoder: UpstreamRequestEncoder) {
        self.endpointIndex = endpointIndex
        self.encoder = encoder
    }

    /// Sets up a new channel to `endpoint` (TLS when `tls` is given, HTTP/1.1, then the
    /// connection itself, last) and returns its connection.
    @discardableResult
    static func install(
        on pipeline: ChannelPipeline.SynchronousOperations, tls: NIOSSLContext?, endpoint: UpstreamEndpoint, index: Int
    ) throws -> UpstreamConnection {
        let encoder = try UpstreamConnectionPool.addClientHandlers(pipeline, tls: tls, endpoint: endpoint)
        let connection = UpstreamConnection(endpointIndex: index, encoder: encoder)
        try pipeline.addHandler(connection)
        return connection
    }

    var isActive: Bool { context?.channel.isActive ?? false }
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>? = nil) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(part), promise: promise)
    }

    /// A request's head, to the endpoint with this path prefix and `Host` (written by the
    /// encoder in front of the head's own target and fields: the head is not copied to add them).
    func writeHead(_ head: HTTPRequestHead, prefix: String, authority: String, promise: EventLoopPromise<Void>?) {
        encoder.endpoint(prefix: prefix, authority: authority)
        write(.head(head), promise: promise)
    }

    func flush() {
        context?.flush()
    }

    func close() {
        context?.close(promise: nil)
    }

    func pauseReading() {
        reads.pause()
    }

    func resumeReading() {
        if reads.open(), let context { context.read() }
    }

    // MARK: channel events

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): trip?.upstreamHead(head)
        case .body(let part): trip?.upstreamBody(part)
        case .end: trip?.upstreamEnd()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        trip?.upstreamReadComplete()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if reads.admits() { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { trip?.upstreamWritable() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        trip?.upstreamClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        trip?.upstreamError(error)
        context.close(promise: nil)
    }
}
