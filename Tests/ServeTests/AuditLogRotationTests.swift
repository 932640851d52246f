import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import NIOCore
import Testing

/// `samlgate serve --audit-log`: the trail in its own file, reopened on SIGHUP after a rotation.
@Suite("samlgate serve audit log", .serialized)
struct AuditLogRotationTests {
    /// One v1 exchange: its status and `X-Request-Id`. (The upstream cannot be reached: the
    /// exchange is verified, then refused with the upstream's code, and audited all the same.)
    static func exchange(_ url: String) async throws -> (Int, String?) {
        var request = HTTPClientRequest(url: url + "/api/v1/tokens/authn")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await GatewayHarness.client.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "X-Request-Id"))
    }

    /// The JSON lines of `path` once there are `count` (or five seconds have passed).
    static func lines(_ path: String, count: Int) async throws -> [[String: Any]] {
        var lines: [[String: Any]] = []
        for _ in 0..<100 {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            if lines.count >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return lines
    }

    @Test("an exchange's line in the file; renamed, SIGHUP: the next line in a new file at the path, 0600; SIGTERM exits 0")
    func rotation() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let directory = TestScratch.directory("samlgate-audit")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("audit.log").path
        let rotated = log + ".1"
        let (process, url, _, _) = try ServerProcess.start([
            "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--audit-log", log,
        ])
        defer { if process.isRunning { process.terminate() } }

        let (status, first) = try await Self.exchange(url)
        let before = try await Self.lines(log, count: 1)
        #expect(before.count == 1)
        #expect(before.first?["request_id"] as? String == first)
        #expect(before.first?["status"] as? Int == status)
        #expect(before.first?["route"] as? String == "v1_tokens_authn")
        #expect((before.first?["assertion"] as? String)?.count == 64)
        #expect(before.first?["subject"] == nil)

        try FileManager.default.moveItem(atPath: log, toPath: rotated)
        kill(process.processIdentifier, SIGHUP)
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: log) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(FileManager.default.fileExists(atPath: log), "not reopened")
        #expect(try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions] as? Int == 0o600)

        let (_, second) = try await Self.exchange(url)
        let after = try await Self.lines(log, count: 1)
        #expect(after.count == 1)
        #expect(after.first?["request_id"] as? String == second)
        let old = try await Self.lines(rotated, count: 1)
        #expect(old.count == 1)
        #expect(old.first?["request_id"] as? String == first)
        #expect(first != second)

        kill(process.processIdentifier, SIGTERM)
        try await SamlgateProcess.waitForExit(process)
        #expect(process.terminationStatus == 0)
    }
}
