import Hummingbird
import Logging
import NIOCore
import ServerSupport

/// An upstream that answers every request `204` with the request headers it received in
/// `X-Echo-Headers` (a JSON object), so a test sees what the gateway forwarded on routes the
/// reference upstream does not echo (the token exchange).
enum HeaderEchoUpstream {
    static func start() async throws -> (url: String, stop: @Sendable () async -> Void) {
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            _ = try await request.collectBody(upTo: 8 << 20)
            var seen = JSONLine()
            for field in request.headers { seen.add(field.name.canonicalName, field.value) }
            var headers = HTTPFields()
            headers[HTTPFields.Element.Name("X-Echo-Headers")!] = seen.json
            return Response(status: .noContent, headers: headers)
        }
        router.post("/**", use: handler)
        router.get("/**", use: handler)
        let port = ListeningPort()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.publish($0.localAddress?.port ?? 0) },
            logger: Logger(label: "echo", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task { try await app.runService() }
        let bound = await port.value()
        return ("http://127.0.0.1:\(bound)", { task.cancel(); _ = try? await task.value })
    }
}
