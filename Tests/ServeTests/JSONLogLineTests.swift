import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import NIOCore
import NIOPosix
import Testing

/// With `--log-format json`, every line `samlgate serve` and `samlgate upstream` write, on
/// standard output and standard error, is a JSON object: the start-up line, request logs,
/// reload errors, and the errors that stop start-up.
@Suite("JSON log lines", .serialized)
struct JSONLogLineTests {
    @Test("serve: the start-up line, request logs, a failed reload and the shutdown are all JSON")
    func serveRunning() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let server = try CapturedServerProcess([
            "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1",
            "--log-format", "json",
        ])
        let url = try #require(server.url, "start-up line: \(server.firstLine)")
        let head = try #require(JSONLogLines.objects(server.firstLine).first)
        #expect(head["msg"] as? String == "listening" && head["mvpds"] as? String == "1" && head["label"] as? String == "samlgate.gateway")
        #expect(try await ServerProcess.get(url + "/healthz").0 == 200)
        // A pass-through to an upstream that refuses: request, warning and refusal log lines.
        #expect(try await ServerProcess.get(url + "/api/v1/config/REF").0 == 502)
        try "not a pem".write(toFile: trust + "/\(GatewayHarness.mvpd)/cert.pem", atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        let (stdout, stderr, status) = server.finish()
        #expect(status == 0)
        let lines = JSONLogLines.objects(stdout) + JSONLogLines.objects(stderr)
        let messages = lines.compactMap { $0["msg"] as? String }
        #expect(messages.contains("request") && messages.contains("refused"), "\(messages)")
        // A refusal names where samlgate raised it (never anything of the request).
        let raisedAt = lines.first { $0["msg"] as? String == "refused" }?["raised_at"] as? String ?? ""
        #expect(raisedAt.wholeMatch(of: /Gateway\/[A-Za-z+]+\.swift:[0-9]+/) != nil, "\(raisedAt)")
        #expect(messages.contains("trust store reload failed; keeping the previous one"), "\(messages)")
        #expect(!stderr.isEmpty)
    }

    @Test("serve: errors that stop start-up are JSON — bad flag value, trust store, port in use — and plain with log-format text")
    func serveFailures() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let badValue = try SamlgateProcess.run(["serve", "--queue", "lots", "--upstream", "http://x:1", "--trust-store", trust])
        #expect(badValue.status == 2)
        #expect(JSONLogLines.objects(badValue.stderr).first?["msg"] as? String == "--queue: queue must be an integer in 0...1000000, got \"lots\"")
        #expect(JSONLogLines.objects(badValue.stderr).first?["level"] as? String == "critical")
        let noTrust = try SamlgateProcess.run(["serve", "--port", "0", "--upstream", "http://x:1", "--trust-store", "/nonexistent"])
        #expect(noTrust.status == 2)
        #expect((JSONLogLines.objects(noTrust.stderr).first?["msg"] as? String)?.contains("/nonexistent") == true, "\(noTrust.stderr)")
        #expect(noTrust.stdout.isEmpty)
        // Port in use: the server's own error, after the logger is set up.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let busy = try SamlgateProcess.run([
            "serve", "--port", "\(listener.localAddress!.port!)", "--upstream", "http://x:1",
            "--trust-store", trust,
        ])
        try await listener.close()
        #expect(busy.status != 0)
        #expect(!JSONLogLines.objects(busy.stderr).isEmpty)
        _ = JSONLogLines.objects(busy.stdoutText)
        // The file's log-format applies when the rest of the configuration is broken.
        let file = try SamlgateProcess.temporaryFile("text.yaml", Data("log-format: text\nqueue: lots\n".utf8))
        let text = try SamlgateProcess.run(["serve", "--config", file])
        #expect(text.status == 2)
        #expect(text.stderr.hasPrefix("samlgate: serve: \(file): queue must be"), "\(text.stderr)")
    }

    @Test("upstream: the start-up line and a configuration error are JSON")
    func upstream() throws {
        let server = try CapturedServerProcess(["upstream", "--port", "0", "--log-format", "json"])
        #expect(server.url?.hasPrefix("http://127.0.0.1:") == true, "\(server.firstLine)")
        let (stdout, stderr, status) = server.finish()
        #expect(status == 0)
        _ = JSONLogLines.objects(stdout) + JSONLogLines.objects(stderr)
        let broken = try SamlgateProcess.temporaryFile("reference.yaml", Data("requestors: 3\nmvpds: []\n".utf8))
        let failed = try SamlgateProcess.run(["upstream", "--port", "0", "--config", broken, "--log-format", "json"])
        #expect(failed.status == 2)
        #expect((JSONLogLines.objects(failed.stderr).first?["msg"] as? String)?.contains(broken) == true, "\(failed.stderr)")
    }
}
