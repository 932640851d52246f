import AsyncHTTPClient
import Foundation
@_spi(Benchmarks) import Gateway
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
