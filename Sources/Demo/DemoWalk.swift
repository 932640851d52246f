import AsyncHTTPClient
import Foundation
@_spi(Benchmarks) import Gateway
import NIOCore
import NIOHTTP1

/// Walks one cookbook scenario through the gateway, step by step, writing each step to the
/// transcript as it completes. Shared plumbing for ``DemoWalk/v1(_:)`` and
/// ``DemoWalk/v2(_:)`` (in their own files).
final class DemoWalk {
    let http: DemoHTTP
    let transcript: DemoTranscript
    let settings: DemoSettings
    let vsa: VSAFramework
    var number = 0
    /// A fresh device per walk, so walks never see each other's tokens.
    let deviceID = "demo-device-" + UUID().uuidString.prefix(8).lowercased()

    init(http: DemoHTTP, transcript: DemoTranscript, settings: DemoSettings, vsa: VSAFramework) {
        self.http = http
        self.transcript = transcript
        self.settings = settings
        self.vsa = vsa
    }

    /// One HTTP step. `decisive` reads the deciding field; the step passes when the status and
    /// the decisive text are what the cookbook says.
    @discardableResult
    func step(
        _ title: String, _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: DemoHTTP.Body = .none,
        headers: [(String, String)] = [], expect status: Int, _ expected: String,
        decisive: (DemoReply) -> String
    ) async -> DemoReply? {
        number += 1
        let call = method.rawValue + " " + path
        do {
            let reply = try await http.call(method, path, query: query, body: body, headers: headers)
            let seen = decisive(reply)
            transcript.add(
                DemoStep(
                    number: number, title: title, call: call, status: reply.status, decisive: seen,
                    expected: "\(status) \(expected)", passed: reply.status == status && seen == expected))
            return reply.status == status ? reply : nil
        } catch {
            transcript.add(
                DemoStep(
                    number: number, title: title, call: call, status: nil, decisive: "no answer: \(error)",
                    expected: "\(status) \(expected)", passed: false))
            return nil
        }
    }

    /// A step on the device (the VSA framework), no HTTP.
    func local(_ title: String, _ seen: String, expected: String) {
        number += 1
        transcript.add(
            DemoStep(
                number: number, title: title, call: "VSA (on the device)", status: nil, decisive: seen,
                expected: expected, passed: seen == expected))
    }

    /// A device step that could not be carried out.
    func localFailure(_ title: String, _ why: String) {
        number += 1
        transcript.add(
            DemoStep(
                number: number, title: title, call: "VSA (on the device)", status: nil, decisive: why,
                expected: "a signed response", passed: false))
    }

    // MARK: what the VSA framework reports

    /// `accessStatus=granted provider=Cablevision`, or `accessStatus=denied →
    /// invalid_header_pfs_permission_access_not_granted`: the backend's code the gateway answers
    /// for that state (``PartnerStatusHeader/grantedProvider(_:)``).
    var frameworkState: String {
        let verdict = vsa.status.verdict(now: Date())
        var answer = ""
        do throws(GatewayError) {
            _ = try PartnerStatusHeader.grantedProvider(verdict)
        } catch {
            answer = " → " + error.backendCode(api: .v2, exchange: true).rawValue
        }
        switch verdict {
        case .granted(let id): return "accessStatus=granted provider=\(id)"
        case .expired(let id): return "accessStatus=granted provider=\(id) expired" + answer
        case .denied: return "accessStatus=denied" + answer
        case .undetermined(let status): return "accessStatus=\(status)" + answer
        default: return "framework error" + answer
        }
    }

    // MARK: decisive fields

    /// `code=invalid_parameter_saml_response reason=expired`: the backend's code, and samlgate's
    /// reason when the gateway refused (the first part of `details`).
    static func code(_ reply: DemoReply) -> String {
        let reason = reply.string("details").map { " reason=" + $0.prefix(while: { $0 != ";" }) } ?? ""
        return "code=" + (reply.code ?? "none") + reason
    }

    static func fields(_ names: String...) -> (DemoReply) -> String {
        { reply in names.map { "\($0)=" + (reply.string($0) ?? "none") }.joined(separator: " ") }
    }

    static func nothing(_ reply: DemoReply) -> String { reply.body.isEmpty ? "(empty)" : "\(reply.body.count) bytes" }

    /// `MVPD: enablePlatformServices=… boardingStatus=…` from either configuration shape.
    static func mvpdProperties(_ id: String) -> (DemoReply) -> String {
        { reply in
            let requestor = reply.json?["requestor"] as? [String: Any]
            let list = (requestor?["mvpds"] ?? reply.json?["mvpds"]) as? [[String: Any]] ?? []
            guard let mvpd = list.first(where: { $0["id"] as? String == id }) else { return "\(id): not listed" }
            let enabled = (mvpd["enablePlatformServices"] as? Bool).map { $0 ? "true" : "false" } ?? "none"
            return "\(id): enablePlatformServices=\(enabled) boardingStatus=\(mvpd["boardingStatus"] as? String ?? "none")"
        }
    }

    static func location(_ reply: DemoReply) -> String {
        "Location=" + (reply.header("Location").map { String($0.split(separator: "?", maxSplits: 1).first ?? "") } ?? "none")
    }
}

// MARK: - HTTP calls

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

// MARK: - Answers

/// One HTTP answer as the demo saw it.
package struct DemoReply: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package var text: String { String(decoding: body, as: UTF8.self) }

    package var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A top-level string (or number) field.
    package func string(_ name: String) -> String? {
        guard let value = json?[name] else { return nil }
        if let text = value as? String { return text }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// The enhanced error `code`.
    package var code: String? { string("code") }
}
