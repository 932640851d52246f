import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The demo's HTTP calls, all to one base URL (the gateway); redirects are not followed so the
/// transcript shows them.
struct DemoHTTP: Sendable {
    let base: String
    let client: HTTPClient

    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    enum Body {
        case none
        case form([(String, String)])
        case json([String: Any])
    }

    func call(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Body = .none,
        headers: [(String, String)] = []
    ) async throws -> DemoReply {
        let queryText = query.isEmpty ? "" : "?" + query.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
        var request = HTTPClientRequest(url: base + path + queryText)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        switch body {
        case .none:
            break
        case .form(let fields):
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: fields.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")))
        case .json(let object):
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object)))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 8 << 20)
        return DemoReply(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Array(buffer: data))
    }

    /// Form and query escaping: everything but unreserved characters.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .init(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? ""
    }
}
