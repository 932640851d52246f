import Foundation
import Gateway
import GatewayTestSupport
import Hummingbird
import Logging
import NIOCore
import ServerSupport
import ServiceLifecycle
import Synchronization

/// An upstream that records every request exactly as it arrived (method, raw request target,
/// headers, body) and answers 200: for checking what the gateway forwards, byte for byte.
final class EchoUpstream: Sendable {
    struct Received: Sendable {
        var method: String
        var target: String
        var headers: [(String, String)]
        var body: String
        /// The body's bytes, for a body that is not text (an OTLP export).
        var bytes: [UInt8]

        func header(_ name: String) -> [String] {
            headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }
    }

    /// The requests so far, shared with the responder.
    final class Log: Sendable {
        let entries = Mutex<[Received]>([])
    }

    let url: String
    private let log: Log
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var requests: [Received] { log.entries.withLock { $0 } }

    private init(url: String, log: Log, group: ServiceGroup, task: Task<Void, any Error>) {
        self.url = url
        self.log = log
        self.group = group
        self.task = task
    }

    static func start() async throws -> EchoUpstream {
        let log = Log()
        let responder = EchoResponder(log: log)
        let port = ListeningPort()
        let logger = Logger(label: "echo", factory: { _ in SwiftLogNoOpLogHandler() })
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.publish($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        let bound = await port.value()
        return EchoUpstream(url: "http://127.0.0.1:\(bound)", log: log, group: group, task: task)
    }

    /// A graceful shutdown, not a cancelled task: cancelling NIO's async server while a
    /// connection it accepted is still queued traps ("Deinited NIOAsyncWriter without calling
    /// finish()", swift-nio issue 2637), which a gateway that has just connected to abort a
    /// request can make happen.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}

/// Records each request into the shared log.
private struct EchoResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let log: EchoUpstream.Log

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 16 << 20)
        let entry = EchoUpstream.Received(
            method: request.method.rawValue, target: request.head.path ?? "",
            headers: request.headers.map { ($0.name.rawName, $0.value) }, body: String(buffer: body),
            bytes: Array(buffer: body))
        log.entries.withLock { $0.append(entry) }
        return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "{\"echo\":true}")))
    }
}

extension EchoUpstream {
    /// Runs `body` with a gateway in front of a fresh echo upstream; always stops both. `body`
    /// gets the harness, the upstream and the gateway's port (for ``RawHTTP``).
    static func withGateway(
        configure: @escaping (inout GatewayConfiguration) -> Void = { _ in },
        _ body: (GatewayHarness, EchoUpstream, Int) async throws -> Void
    ) async throws {
        let echo = try await EchoUpstream.start()
        do {
            try await withHarness(upstreamURL: echo.url, configure: configure) { h in
                try await body(h, echo, Int(h.gatewayURL.split(separator: ":").last!)!)
            }
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
    }
}
