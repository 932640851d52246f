import Foundation
import Hummingbird
import Logging
import NIOCore
import ServerSupport
import Synchronization

/// An IdP's metadata endpoint on loopback, scriptable: serves the current document with an
/// `ETag` (and answers `304` to a matching `If-None-Match`), or misbehaves as told — an HTTP
/// error, a stall, a redirect. Records how often it was asked and with which validator.
final class MetadataServer: Sendable {
    enum Mode: Sendable {
        case serve
        case status(Int)
        /// The head is sent after this long.
        case stall(Duration)
        /// A redirect to this location.
        case redirect(String)
        /// The head at once, then the body a few bytes at a time, `pause` apart.
        case trickle(pause: Duration)
    }

    struct State: Sendable {
        var document: [UInt8] = []
        var mode: Mode = .serve
        var requests = 0
        var conditionalRequests = 0
    }

    let url: String
    private let shared: SharedState
    private let task: Task<Void, any Error>

    private init(url: String, shared: SharedState, task: Task<Void, any Error>) {
        self.url = url
        self.shared = shared
        self.task = task
    }

    /// Serves `document` at `/metadata` (and anything else at the same URL space), listening on
    /// `host` (an IP address; loopback unless told otherwise).
    static func start(document: String, host: String = "127.0.0.1") async throws -> MetadataServer {
        let shared = SharedState(State(document: Array(document.utf8)))
        let router = Router()
        router.get("/**") { request, _ -> Response in
            let (state, conditional) = shared.value.withLock { state -> (State, Bool) in
                state.requests += 1
                let etag = Self.etag(state.document)
                let conditional = request.headers[.ifNoneMatch] == etag
                if conditional { state.conditionalRequests += 1 }
                return (state, conditional)
            }
            switch state.mode {
            case .serve:
                break
            case .status(let code):
                return Response(status: .init(code: code))
            case .stall(let duration):
                try await Task.sleep(for: duration)
            case .redirect(let location):
                return Response(status: .found, headers: [.location: location])
            case .trickle(let pause):
                let document = state.document
                return Response(
                    status: .ok, headers: [.contentType: "application/samlmetadata+xml"],
                    body: .init { writer in
                        for start in stride(from: 0, to: document.count, by: 16) {
                            try await writer.write(ByteBuffer(bytes: document[start..<min(start + 16, document.count)]))
                            try await Task.sleep(for: pause)
                        }
                        try await writer.finish(nil)
                    })
            }
            if conditional { return Response(status: .notModified, headers: [.eTag: Self.etag(state.document)]) }
            return Response(
                status: .ok, headers: [.eTag: Self.etag(state.document), .contentType: "application/samlmetadata+xml"],
                body: .init(byteBuffer: ByteBuffer(bytes: state.document)))
        }
        let port = ListeningPort()
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: 0)),
            onServerRunning: { port.publish($0.localAddress?.port ?? 0) },
            logger: Logger(label: "metadata", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task { try await app.runService() }
        let bound = await port.value()
        let authority = host.contains(":") ? "[\(host)]" : host
        return MetadataServer(url: "http://\(authority):\(bound)/metadata", shared: shared, task: task)
    }

    /// A strong validator of the document's bytes.
    static func etag(_ document: [UInt8]) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in document { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return "\"\(String(hash, radix: 16))\""
    }

    func set(document: String) {
        shared.value.withLock {
            $0.document = Array(document.utf8)
            $0.mode = .serve
        }
    }
    func set(mode: Mode) { shared.value.withLock { $0.mode = mode } }
    var requests: Int { shared.value.withLock { $0.requests } }
    var conditionalRequests: Int { shared.value.withLock { $0.conditionalRequests } }

    func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}

/// A `Mutex` held by reference, so the route closure and the server object share one.
final class SharedState: Sendable {
    let value: Mutex<MetadataServer.State>
    init(_ state: MetadataServer.State) { value = Mutex(state) }
}
