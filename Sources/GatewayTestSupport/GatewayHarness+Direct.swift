import AsyncHTTPClient
import NIOCore
import NIOHTTP1

extension GatewayHarness {
    /// Sends to the reference upstream itself, with no gateway in between: what the backend
    /// answers a client that talks to it directly.
    package func sendUpstream(
        _ method: HTTPMethod = .POST, _ path: String, body: String? = nil,
        headers: [(String, String)] = [("Content-Type", "application/x-www-form-urlencoded")]
    ) async throws -> Reply {
        try await Self.request(method, upstreamURL + path, body: body, headers: headers)
    }

    /// One request to `url` with the harness's client, the whole answer collected.
    package static func request(_ method: HTTPMethod, _ url: String, body: String?, headers: [(String, String)]) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, raw: Array(buffer: data))
    }
}
