import GatewayTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOSSL
import Workers

@testable import Gateway

/// A gateway's client connection on an `EmbeddedChannel` behind NIO's HTTP/1.1 codec, as the
/// listener builds its pipeline, with its backends scripted on the same embedded event loop
/// (``EmbeddedUpstreams``) and exchanges verified in line: requests as bytes in, answers as bytes
/// out, no socket, no other thread, and the loop's virtual time for every clock
/// (`advanceTime(by:)`).
final class EmbeddedGateway {
    let channel = EmbeddedChannel()
    let core: GatewayCore
    let upstreams: EmbeddedUpstreams

    /// - Parameter upstreamCount: how many backends the gateway has (each scripted).
    init(upstreamCount: Int = 1, configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        var configuration = GatewayConfiguration()
        configuration.trustStore = try GatewayHarness.makeTrustStore()
        configuration.upstreams = (0..<upstreamCount).map { "http://127.0.0.1:\(9000 + $0)" }
        configure(&configuration)
        upstreams = EmbeddedUpstreams(loop: channel.embeddedEventLoop)
        let logger = Logger(label: "embedded") { _ in SwiftLogNoOpLogHandler() }
        core = try GatewayCore(
            configuration: configuration, logger: logger, eventLoopGroup: channel.embeddedEventLoop, tracing: nil,
            seams: DataPlaneSeams(connector: upstreams, executor: InlineExecutor()))
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
        try pipeline.addHandler(GatewayConnectionHandler(core: core, eventLoop: channel.embeddedEventLoop))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40_000)).wait()
    }

    deinit {
        core.pool.shutdown()
    }

    var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

    func send(_ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
        // What the read scheduled on the loop (an exchange's return from its worker) runs now.
        loop.run()
    }

    /// Moves the virtual clock on, firing what falls due.
    func advance(_ seconds: Double) {
        loop.advanceTime(by: TimeAmount(seconds: seconds))
    }

    /// Everything written to the client so far.
    func written() throws -> String {
        var out = ""
        while let part = try channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: part) }
        return out
    }

    /// The status lines written so far, in order (a body runs straight into the next answer's head; `\r\n` is one `Character`).
    func statuses() throws -> [String] {
        try written().matches(of: /HTTP\/1\.1 [0-9]{3} [A-Za-z ]+\r\n/).map { String($0.output.dropLast()) }
    }

    /// The value of a line of `/metrics` (labels included), or 0.
    func metric(_ prefix: String) -> Double {
        let text = String(
            decoding: core.metrics.exposition(
                queueDepth: 0,
                state: PointInTimeGauges.State(workers: 0, queueLimit: 0, upstreams: 0, upstreamsHealthy: 0, openConnections: 0, replayStoreUp: nil)),
            as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else { return 0 }
        return Double(line.dropFirst(prefix.count + 1)) ?? 0
    }
}

/// Backends as embedded channels on the client's loop: each connect opens one — the gateway's
/// own client pipeline (``UpstreamConnection/install(on:tls:endpoint:index:)``) — or fails as
/// the test scripts it. A test reads what a backend was sent and writes its answer as bytes.
final class EmbeddedUpstreams: UpstreamConnector, @unchecked Sendable {
    let loop: EmbeddedEventLoop
    /// Every connection opened, in order, with its endpoint's index.
    private(set) var opened: [(endpoint: Int, channel: EmbeddedChannel)] = []
    /// Endpoints whose connects are refused.
    var refusing: Set<Int> = []
    /// Connects that never complete (a backend that does not accept), until the trip gives up.
    var unanswered = false

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    var last: EmbeddedChannel? { opened.last?.channel }

    func connect(
        to endpoint: UpstreamEndpoint, index: Int, tls: NIOSSLContext?, timeout: TimeAmount, on eventLoop: any EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) {
        if unanswered { return }
        if refusing.contains(index) { return completion(.failure(.connecting(ChannelError.connectTimeout(timeout)))) }
        let channel = EmbeddedChannel(loop: loop)
        do {
            let connection = try UpstreamConnection.install(on: channel.pipeline.syncOperations, tls: nil, endpoint: endpoint, index: index)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9000 + index)).wait()
            opened.append((index, channel))
            completion(.success(connection))
        } catch {
            completion(.failure(.connecting(error)))
        }
    }

    /// What `channel` (the last connection by default) was sent so far.
    func received(on channel: EmbeddedChannel? = nil) throws -> String {
        guard let channel = channel ?? last else { return "" }
        var out = ""
        while let part = try channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: part) }
        return out
    }

    /// The backend answers on `channel` (the last connection by default).
    func answer(_ text: String, on channel: EmbeddedChannel? = nil) throws {
        try (channel ?? last)?.writeInbound(ByteBuffer(string: text))
        loop.run()
    }
}

/// Runs a job where it is enqueued: an exchange's verification on the test's thread, its return
/// to the loop queued there (``EmbeddedGateway/send(_:)`` runs it).
struct InlineExecutor: VerificationExecutor {
    func enqueue(_ job: @escaping WorkerPool.Job) -> WorkerPoolError? {
        job()
        return nil
    }
}

/// A client that does not read: the connection's writes stay in its buffers (their promises
/// pending, the channel unwritable) until ``release()`` hands them on, as a socket's would once
/// the client reads. Put first in an ``EmbeddedGateway``'s pipeline.
final class HeldWrites: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny

    private var held: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        held.append((data, promise))
    }

    func flush(context: ChannelHandlerContext) {}

    /// The client reads: everything held is written, in order, and its promises complete.
    func release() {
        guard let context else { return }
        let parts = held
        held = []
        for (data, promise) in parts { context.write(data, promise: promise) }
        context.flush()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for (_, promise) in held { promise?.fail(ChannelError.ioOnClosedChannel) }
        held = []
    }
}
