import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServerSupport

/// Upstreams that misbehave on purpose: answer slowly, answer 500, answer before reading the
/// body, or drop the connection.
package enum FaultyUpstream {
    package enum Fault: Sendable {
        case slow(Duration)
        case status500
        /// 413 right after the head (with an empty or a short body), the request body unread.
        case answerBeforeBody(emptyAnswer: Bool)
    }

    /// A Hummingbird server answering every request with `fault`; returns its URL and a stopper.
    package static func start(_ fault: Fault) async throws -> (url: String, stop: @Sendable () async -> Void) {
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            if case .answerBeforeBody(let empty) = fault {
                return Response(
                    status: .contentTooLarge, body: empty ? .init() : .init(byteBuffer: ByteBuffer(string: "{\"upstream\":\"too large\"}")))
            }
            var request = request
            _ = try await request.collectBody(upTo: 8 << 20)
            switch fault {
            case .slow(let delay):
                try await Task.sleep(for: delay)
                return Response(status: .noContent)
            case .status500:
                return Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "{\"upstream\":\"broken\"}")))
            case .answerBeforeBody:
                preconditionFailure("answered above")
            }
        }
        router.post("/**", use: handler)
        router.get("/**", use: handler)
        let port = ListeningPort()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.publish($0.localAddress?.port ?? 0) },
            logger: Logger(label: "faulty", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task { try await app.runService() }
        let bound = await port.value()
        return (
            "http://127.0.0.1:\(bound)",
            {
                task.cancel()
                _ = try? await task.value
            }
        )
    }

    /// A TCP server that accepts, reads a little and closes the connection without answering.
    package static func startResetting() async throws -> (url: String, stop: @Sendable () async -> Void) {
        try await startRaw { CloseOnRead() }
    }

    /// A TCP server giving each connection a fresh handler from `makeHandler` (none: the
    /// connection is only accepted): for backends that break HTTP in ways an HTTP server library
    /// will not. `readSize`: the connections are read only when their handler asks, that much at
    /// a time (`nil`: as fast as they come).
    private static func startRaw(
        readSize: Int? = nil, _ makeHandler: (@Sendable () -> any ChannelHandler & Sendable)?
    ) async throws -> (url: String, stop: @Sendable () async -> Void) {
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        if let readSize {
            bootstrap = bootstrap.childChannelOption(.autoRead, value: false)
                .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: readSize))
        }
        if let makeHandler {
            bootstrap = bootstrap.childChannelInitializer { channel in channel.pipeline.addHandler(makeHandler()) }
        }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        return ("http://127.0.0.1:\(port)", { try? await channel.close() })
    }

    /// A TCP server that accepts connections and never reads from them: a backend that takes no
    /// more of a body once the socket buffers are full.
    package static func startNeverReading() async throws -> (url: String, stop: @Sendable () async -> Void) {
        try await startRaw(readSize: 65_536, nil)
    }

    /// A TCP server that reads each connection 64 KiB at a time, one read a millisecond, and
    /// answers `204` once a request's head and its `Content-Length` body have arrived: a backend
    /// that keeps pushing back on a large body, and takes it whole in the end.
    package static func startReadingSlowly() async throws -> (url: String, stop: @Sendable () async -> Void) {
        try await startRaw(readSize: 65_536) { SlowReader() }
    }

    package final class SlowReader: ChannelInboundHandler, @unchecked Sendable {
        package typealias InboundIn = ByteBuffer
        package typealias OutboundOut = ByteBuffer
        /// The head read so far (until its end is found).
        private var head: [UInt8] = []
        /// The body bytes still to come, once the head is read.
        private var bodyLeft: Int?
        private var timer: RepeatedTask?

        package init() {}

        package func channelActive(context: ChannelHandlerContext) {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(1), delay: .milliseconds(1)) { _ in
                loopBound.value.read()
            }
        }

        package func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
        }

        /// Keeps the head until its end, then only counts the body (one request per connection at
        /// a time, as the gateway sends them).
        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if bodyLeft == nil {
                head += Array(buffer: bytes)
                let end = Array("\r\n\r\n".utf8)
                guard let at = head.indices.dropLast(3).first(where: { head[$0..<$0 + 4].elementsEqual(end) }) else { return }
                let text = String(decoding: head[..<at], as: UTF8.self).lowercased()
                let length =
                    text.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).filter { $0 != " " }) } ?? 0
                bytes = ByteBuffer(bytes: head[(at + 4)...])
                head = []
                bodyLeft = length
            }
            bodyLeft! -= bytes.readableBytes
            guard bodyLeft! <= 0 else { return }
            bodyLeft = nil
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 204 No Content\r\n\r\n")), promise: nil)
        }
    }

    package final class CloseOnRead: ChannelInboundHandler, Sendable {
        package typealias InboundIn = ByteBuffer

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.close(promise: nil)
        }
    }

    /// A TCP server that answers every read with `101 Switching Protocols` and bytes that are not
    /// HTTP, keeping the connection open: a backend that upgrades unasked.
    package static func startSwitching() async throws -> (url: String, stop: @Sendable () async -> Void) {
        try await startRaw { SwitchOnRead() }
    }

    package final class SwitchOnRead: ChannelInboundHandler, Sendable {
        package typealias InboundIn = ByteBuffer
        package typealias OutboundOut = ByteBuffer

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nNOT-HTTP\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
        }
    }

    /// A TCP server answering every read with `bytes` and then closing: a backend that speaks
    /// something else than HTTP, or breaks off in the middle of its answer.
    package static func startAnswering(_ bytes: [UInt8]) async throws -> (url: String, stop: @Sendable () async -> Void) {
        try await startRaw { AnswerOnRead(bytes: bytes) }
    }

    package final class AnswerOnRead: ChannelInboundHandler, Sendable {
        package typealias InboundIn = ByteBuffer
        package typealias OutboundOut = ByteBuffer
        package let bytes: [UInt8]

        package init(bytes: [UInt8]) { self.bytes = bytes }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }
}
