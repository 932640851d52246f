import GatewayTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

@testable import Gateway

/// A backend on a bare NIO HTTP/1.1 server, for answers a server library shapes by itself:
///
/// - `/reflect` puts the request's `X-Reflect` value into its answer head `X-Copies` times (as an
///   echo endpoint or a redirect's `Location` reflects what it was sent), with a header of its
///   own of `X-Own-Length` bytes;
/// - `/big` answers 32 MiB; `/medium` 40 KiB (read whole by the gateway before its client's
///   connection stops taking more); `/small` 12 KiB (one read);
/// - `/upload` answers `204` once the whole body is read, after an interim `100 Continue` sent
///   as soon as the head arrives when the request carries `X-Interim: 1`;
/// - `/silent` never answers (the connection stays open);
/// - any other path answers `200 plain`.
///
/// Its parser takes request heads up to 1 MiB, so whatever the gateway forwards reaches it. It
/// counts the connections open to it (``OpenConnections``).
enum ScriptedUpstream {
    /// The connections open to the backend now.
    final class OpenConnections: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Counts its connection while it is open.
    final class Counter: ChannelInboundHandler, Sendable {
        typealias InboundIn = NIOAny
        let open: OpenConnections
        init(_ open: OpenConnections) { self.open = open }

        func channelActive(context: ChannelHandlerContext) {
            open.count.add(1, ordering: .relaxed)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            open.count.subtract(1, ordering: .relaxed)
            context.fireChannelInactive()
        }
    }

    /// Runs `body` with a fresh backend and a gateway in front of it (`configure`); always stops both.
    static func withGateway(
        configure: @escaping (inout GatewayConfiguration) -> Void,
        _ body: (GatewayHarness, OpenConnections) async throws -> Void
    ) async throws {
        let upstream = try await start()
        do {
            try await withHarness(upstreamURL: upstream.url, configure: configure) { (h: GatewayHarness) async throws in
                try await body(h, upstream.open)
            }
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
    }

    static func start() async throws -> (url: String, stop: @Sendable () async -> Void, open: OpenConnections) {
        let open = OpenConnections()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Counter(open))
                    var limits = NIOHTTPDecoderLimitConfiguration()
                    limits.maxHeaderListSize = 1 << 20
                    limits.maxHeaderFieldSize = 1 << 20
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
                    try channel.pipeline.syncOperations.addHandler(Responder())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        return ("http://127.0.0.1:\(port)", { try? await channel.close() }, open)
    }

    static let mediumLength = 40 << 10

    final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private var head: HTTPRequestHead?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                if head.uri == "/upload" && head.headers.first(name: "x-interim") == "1" {
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
                }
            case .body:
                break
            case .end:
                guard let head else { return }
                self.head = nil
                if head.uri != "/silent" { respond(to: head, context: context) }
            }
        }

        private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            var status = HTTPResponseStatus.ok
            var body = ByteBuffer(string: "plain")
            switch request.uri {
            case "/reflect":
                let value = request.headers.first(name: "x-reflect") ?? ""
                for copy in 0..<(request.headers.first(name: "x-copies").flatMap(Int.init) ?? 1) {
                    headers.add(name: "X-Echo-\(copy)", value: value)
                }
                let own = request.headers.first(name: "x-own-length").flatMap(Int.init) ?? 0
                if own > 0 { headers.add(name: "X-Own", value: String(repeating: "o", count: own)) }
                body = ByteBuffer(string: "ok")
            case "/big":
                body = ByteBuffer(repeating: UInt8(ascii: "a"), count: 32 << 20)
            case "/medium":
                body = ByteBuffer(repeating: UInt8(ascii: "m"), count: ScriptedUpstream.mediumLength)
            case "/small":
                body = ByteBuffer(repeating: UInt8(ascii: "s"), count: 12 << 10)
            case "/upload":
                status = .noContent
                body = ByteBuffer()
            default:
                break
            }
            if status != .noContent { headers.add(name: "Content-Length", value: String(body.readableBytes)) }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
