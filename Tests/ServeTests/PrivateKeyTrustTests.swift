import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

/// A private key in the trust store is refused, naming the file: at start-up (`serve`,
/// `verify`), for `--trust`, and on SIGHUP (the previous store stays, the failure is counted).
@Suite("Private keys in the trust store", .serialized)
struct PrivateKeyTrustTests {
    /// A trust store whose `Cablevision/key.pem` is the harness IdP's real private key.
    static func storeWithPrivateKey() throws -> (directory: String, key: String) {
        let directory = try GatewayHarness.makeTrustStore()
        let key = URL(fileURLWithPath: directory).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("key.pem").path
        try GatewayHarness.idpPair.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return (directory, key)
    }

    @Test("serve and verify refuse a trust store holding a private key; verify --trust refuses a private key file")
    func startup() throws {
        let (directory, key) = try Self.storeWithPrivateKey()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let serve = try SamlgateProcess.run(
            [
                "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", directory,
                "--log-format", "text",
            ], timeout: 20)
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("\(key) holds a private key"), "\(serve.stderr)")
        let response = try SamlgateProcess.temporaryFile("r.xml", Data(GatewayHarness.issue()))
        let verify = try SamlgateProcess.run(["verify", "--trust-store", directory, "--mvpd", GatewayHarness.mvpd, response])
        #expect(verify.status == 2)
        #expect(verify.stderr.contains("\(key) holds a private key"), "\(verify.stderr)")
        let direct = try SamlgateProcess.run(["verify", "--trust", key, response])
        #expect(direct.status == 2)
        #expect(direct.stderr.contains("\(key) holds a private key"), "\(direct.stderr)")
        // The same store without the key is fine.
        try FileManager.default.removeItem(atPath: key)
        let clean = try SamlgateProcess.run(["verify", "--trust-store", directory, "--mvpd", GatewayHarness.mvpd, response])
        #expect(clean.status == 0, "\(clean.stdoutText) \(clean.stderr)")
    }

    @Test("SIGHUP with a private key added keeps the previous store and counts a failed reload")
    func reload() async throws {
        let directory = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, url, _, output) = try ServerProcess.start(
            ["--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", directory, "--workers", "1"])
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            _ = output
        }
        let second = URL(fileURLWithPath: directory).appendingPathComponent("Second")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        try GatewayHarness.idpPair.certificatePEM.write(to: second.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        try GatewayHarness.idpPair.privateKeyPEM.write(to: second.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        var failed = false
        for _ in 0..<100 where !failed {
            try await Task.sleep(for: .milliseconds(50))
            let response = try await GatewayHarness.client.execute(HTTPClientRequest(url: url + "/metrics"), timeout: .seconds(10))
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            failed = body.contains("samlgate_trust_store_reloads_total{result=\"failed\"} 1")
        }
        #expect(failed)
        #expect(try await ServerProcess.get(url + "/readyz").1["mvpds"] as? Int == 1)
    }
}
