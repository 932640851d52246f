import Foundation
import Hummingbird
import NIOCore
import ServerSupport

/// Routes for people and tests, outside the backend's API: what reached the upstream, and an
/// echo to watch what a proxy forwards.
extension ReferenceRoutes {
    func addInspection(to router: Router<BasicRequestContext>) {
        router.get("/reference/exchanges") { _, _ in exchanges() }
        for method: HTTPRequest.Method in [.get, .post, .put, .delete, .patch, .head, .options] {
            router.on("/reference/echo/**", method: method) { request, _ in try await echo(request) }
        }
    }

    /// `GET /reference/exchanges`: the recorded `SAMLResponse` fields, as received.
    func exchanges() -> Response {
        let items: [[String: Any]] = store.exchanges.map { exchange in
            [
                "route": exchange.route, "requestor": exchange.requestor, "requestId": exchange.requestID.map { $0 as Any } ?? NSNull(),
                "SAMLResponse": exchange.samlResponse,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: items, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return ReferenceReply.body(200, "application/json", Array(data))
    }

    /// `ANY /reference/echo/...`: the request body unchanged, with the method, URI and headers it
    /// saw in `X-Echo-*` headers.
    func echo(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        var headers = HTTPFields()
        headers[Field.Name("X-Echo-Method")!] = request.method.rawValue
        headers[Field.Name("X-Echo-URI")!] = request.uri.string
        var seen = JSONLine()
        for field in request.headers { seen.add(field.name.canonicalName, field.value) }
        headers[Field.Name("X-Echo-Headers")!] = seen.json
        headers[.contentType] = request.headers[.contentType] ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
