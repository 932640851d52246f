import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

/// `replay-store-password-file`: the Redis password from a file (a mounted secret, a systemd
/// credential) rather than from the URL, with a real `redis-server` that requires it.
@Suite(.serialized)
struct ReplayStorePasswordFileTests {
    @Test("the password from the file opens Redis; /readyz reports the store up, the password is never printed")
    func passwordFromFile() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let file = try SamlgateProcess.temporaryFile("redis-password", Data("topsecret\n".utf8))
        try await RedisServerProcess.with(arguments: ["--requirepass", "topsecret"]) { redis in
            let (process, url, line, _) = try ServerProcess.start([
                "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
                "--replay-store", "redis://127.0.0.1:\(redis.port)/0", "--replay-store-password-file", file,
            ])
            defer { if process.isRunning { process.terminate() } }
            #expect(!line.contains("topsecret"), "\(line)")
            var state: String?
            for _ in 0..<50 where state != "up" {
                state = try await ServerProcess.get(url + "/readyz").1["replayStore"] as? String
                if state != "up" { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(state == "up")
        }
    }

    @Test("a missing or empty file, a URL with a password too, or a memory store stop start-up without printing the password")
    func refusedAtStartUp() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let common = ["serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--log-format", "text"]
        let file = try SamlgateProcess.temporaryFile("redis-password", Data("topsecret\n".utf8))
        let empty = try SamlgateProcess.temporaryFile("redis-password-empty", Data("\n".utf8))
        let cases: [([String], String)] = [
            (["--replay-store", "redis://127.0.0.1:1", "--replay-store-password-file", "/nonexistent/password"], "cannot be read"),
            (["--replay-store", "redis://127.0.0.1:1", "--replay-store-password-file", empty], "is empty"),
            (["--replay-store", "redis://:other@127.0.0.1:1", "--replay-store-password-file", file], "has a password too"),
            (["--replay-store-password-file", file], "is not a redis"),
        ]
        for (arguments, message) in cases {
            let run = try await SamlgateProcess.runOffPool(common + arguments, timeout: 30)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.contains("replay-store-password-file") && run.stderr.contains(message), "\(run.stderr)")
            #expect(!run.stderr.contains("topsecret") && !run.stderr.contains("other@"), "\(run.stderr)")
        }
    }
}
