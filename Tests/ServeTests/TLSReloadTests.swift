import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import NIOCore
import Synchronization
import Testing

/// `samlgate serve` serving TLS as a process of its own: the certificate renewed under a stream
/// of requests (SIGHUP, and the `tls-poll` watch), a bad pair published by mistake, and the
/// settings that stop start-up.
@Suite("samlgate serve TLS reload", .serialized)
struct TLSReloadTests {
    /// A running `samlgate serve` with TLS from `directory`'s `tls.pem` and `tls.key`, before a
    /// running reference upstream; both stopped by ``stop()``.
    struct Served {
        let gateway: Process
        let upstream: Process
        let url: String
        let port: Int
        let probes: String
        let pipes: [Pipe]

        init(directory: String, trust: String, extra: [String] = []) throws {
            let (upstream, upstreamURL, _, upstreamPipe) = try ServerProcess.start(["--port", "0"], command: "upstream")
            self.upstream = upstream
            let (gateway, url, line, pipe) = try ServerProcess.start(
                [
                    "--port", "0", "--upstream", upstreamURL, "--trust-store", trust, "--tls-certificate", directory + "/tls.pem",
                    "--tls-key", directory + "/tls.key", "--plain-port", "0", "--workers", "1",
                ] + extra)
            self.gateway = gateway
            self.url = url
            port = Int(url.split(separator: ":").last!)!
            let fields = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            probes = fields?["probesURL"] as? String ?? ""
            pipes = [upstreamPipe, pipe]
        }

        func stop() {
            for process in [gateway, upstream] where process.isRunning { process.terminate() }
        }

        func metric(_ prefix: String) async throws -> Double {
            let (_, body) = try await Self.text(probes + "/metrics")
            guard let line = body.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else { return 0 }
            return Double(line.split(separator: " ").last ?? "") ?? 0
        }

        /// `prefix`'s value once it is above 0 (polled for up to 10 s), else 0.
        func eventually(_ prefix: String) async throws -> Double {
            for _ in 0..<100 {
                let value = try await metric(prefix)
                if value > 0 { return value }
                try await Task.sleep(for: .milliseconds(100))
            }
            return 0
        }

        func readiness() async throws -> [String: Any] {
            let (_, body) = try await Self.text(probes + "/readyz")
            return (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }

        static func text(_ url: String, via client: HTTPClient = GatewayHarness.client) async throws -> (Int, String) {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: body))
        }
    }

    /// What the request stream met: answers 200, and every other outcome; and when the reload was sent.
    final class Outcomes: Sendable {
        let state = Mutex<(ok: Int, failed: [String], reloadedAt: Date?)>((0, [], nil))

        func record(_ failure: String?) {
            state.withLock { if let failure { $0.failed.append(failure) } else { $0.ok += 1 } }
        }

        /// The stream goes on until a second after the reload (and at least `minimum` requests).
        func goesOn(after made: Int, minimum: Int = 10) -> Bool {
            state.withLock { made < minimum || $0.reloadedAt.map { Date().timeIntervalSince($0) < 1 } ?? true }
        }
    }

    /// Publishes `name`'s pair as `tls.pem`/`tls.key`, each file replaced whole (as a renewal tool writes them).
    static func publish(_ pki: TestPKI, _ name: String, in directory: String) throws {
        let source = pki.directory + "/" + name
        try TestPKI.publish((source + ".pem", source + ".key"), to: (directory + "/tls.pem", directory + "/tls.key"))
    }

    /// An authority with two `localhost` pairs (`gateway-first`, `gateway-second`), the first
    /// published and served; the second is the renewal a test publishes.
    static func serveFirstOfTwo(extra: [String]) throws -> (TestPKI, String, Served) {
        let pki = try TestPKI()
        try pki.issue("first", commonName: "gateway-first")
        try pki.issue("second", commonName: "gateway-second")
        let directory = try scratch()
        try publish(pki, "first", in: directory)
        return (pki, directory, try Served(directory: directory, trust: try GatewayHarness.makeTrustStore(), extra: extra))
    }

    static func scratch() throws -> String {
        let directory = TestScratch.directory("samlgate-tls").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test(
        "requests on HTTP/2 and HTTP/1.1 connections across a SIGHUP that renews the certificate: nothing lost, new connections see it"
    )
    func renewedUnderLoad() async throws {
        let (pki, directory, served) = try Self.serveFirstOfTwo(extra: ["--tls-poll", "0"])
        defer { served.stop() }
        #expect(try TestPKI.servedSubject(port: served.port)?.contains("gateway-first") == true)

        let h2 = try pki.client()
        let h1 = try pki.client(http1Only: true)
        let outcomes = Outcomes()
        let url = served.url
        let pid = served.gateway.processIdentifier
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in [h2, h1] {
                group.addTask {
                    var made = 0
                    while outcomes.goesOn(after: made) {
                        made += 1
                        do {
                            let (status, _) = try await Served.text(url + "/api/v1/config/REF", via: client)
                            outcomes.record(status == 200 ? nil : "status \(status)")
                        } catch {
                            outcomes.record("\(error)")
                        }
                    }
                }
            }
            group.addTask {
                // Once both connections are busy: the reload happens under the stream.
                while outcomes.state.withLock({ $0.ok + $0.failed.count }) < 10 { try await Task.sleep(for: .milliseconds(20)) }
                try Self.publish(pki, "second", in: directory)
                kill(pid, SIGHUP)
                outcomes.state.withLock { $0.reloadedAt = Date() }
            }
            try await group.waitForAll()
        }
        try await h2.shutdown()
        try await h1.shutdown()
        let (ok, failed) = outcomes.state.withLock { ($0.ok, $0.failed) }
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        #expect(ok >= 20, "\(ok) requests")
        // SIGHUP is taken on a task of the gateway's own: by now, or very soon.
        #expect(try await served.eventually("samlgate_tls_reloads_total{result=\"ok\"}") == 1)
        #expect(try TestPKI.servedSubject(port: served.port)?.contains("gateway-second") == true)
        kill(served.gateway.processIdentifier, SIGTERM)
        try await SamlgateProcess.waitForExit(served.gateway)
        #expect(served.gateway.terminationStatus == 0)
    }

    @Test(
        "a bad pair published (another certificate's key) keeps the old one serving, counted, on /readyz; the poll takes the next good pair"
    )
    func badPairKeepsTheOld() async throws {
        let (pki, directory, served) = try Self.serveFirstOfTwo(extra: ["--tls-poll", "0.2"])
        defer { served.stop() }

        // The second certificate with the first's key.
        let certificate = try Data(contentsOf: URL(fileURLWithPath: pki.directory + "/second.pem"))
        try certificate.write(to: URL(fileURLWithPath: directory + "/tls.pem"), options: .atomic)
        #expect(try await served.eventually("samlgate_tls_reloads_total{result=\"failed\"}") == 1)
        #expect(try TestPKI.servedSubject(port: served.port)?.contains("gateway-first") == true)
        let ready = try await served.readiness()
        #expect(ready["status"] as? String == "ready" && ready["tls"] as? String == "reload_failed", "\(ready)")
        // Why (a path, the TLS library's words) is the log line's, not the probe's.
        #expect(!ready.keys.contains { $0.lowercased().contains("error") } && !"\(ready)".contains(directory), "\(ready)")
        let client = try pki.client()
        #expect(try await Served.text(served.url + "/api/v1/config/REF", via: client).0 == 200)
        try await client.shutdown()

        try Self.publish(pki, "second", in: directory)
        #expect(try await served.eventually("samlgate_tls_reloads_total{result=\"ok\"}") == 1)
        #expect(try TestPKI.servedSubject(port: served.port)?.contains("gateway-second") == true)
        #expect(try await served.readiness()["tls"] as? String == "ok")
    }

    @Test("SIGHUP reloads the upstreams' client certificate: a backend that refused the old one answers once the renewed one is published")
    func upstreamRenewedOnSIGHUP() async throws {
        // The backend: a serve requiring a client certificate of `pki`'s.
        let pki = try TestPKI()
        try pki.issue("first", commonName: "backend")
        let backendFiles = try Self.scratch()
        try Self.publish(pki, "first", in: backendFiles)
        let trust = try GatewayHarness.makeTrustStore()
        let backend = try Served(directory: backendFiles, trust: trust, extra: ["--tls-client-ca", pki.caPath, "--tls-client-auth", "require"])
        defer { backend.stop() }
        // The front presents another authority's certificate first, then the renewed one.
        let (good, goodKey) = try pki.issue("front", commonName: "samlgate-front", server: false)
        let (refused, refusedKey) = try TestPKI(name: "Another CA").issue("front", commonName: "samlgate-front", server: false)
        let files = try Self.scratch()
        func publish(_ certificate: String, _ key: String) throws {
            try TestPKI.publish((certificate, key), to: (files + "/client.pem", files + "/client.key"))
        }
        try publish(refused, refusedKey)
        let (front, url, _, pipe) = try ServerProcess.start([
            "--port", "0", "--upstream", "https://127.0.0.1:\(backend.port)", "--trust-store", trust, "--workers", "1",
            "--upstream-ca", pki.caPath, "--upstream-tls-certificate", files + "/client.pem", "--upstream-tls-key", files + "/client.key",
            "--tls-poll", "0",
        ])
        defer { if front.isRunning { front.terminate() } }
        #expect(try await Served.text(url + "/api/v1/config/REF").0 == 502)
        try publish(good, goodKey)
        kill(front.processIdentifier, SIGHUP)
        var reloaded = false
        for _ in 0..<100 where !reloaded {
            reloaded = try await Served.text(url + "/metrics").1.contains("samlgate_upstream_tls_reloads_total{result=\"ok\"} 1")
            if !reloaded { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(reloaded, "no reload counted after SIGHUP")
        let (status, body) = try await Served.text(url + "/api/v1/config/REF")
        #expect(status == 200, "\(body)")
        withExtendedLifetime(pipe) {}
    }

    @Test("start-up stops (exit 2, the setting named) on TLS settings that cannot serve")
    func startUpRefusals() throws {
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("server", commonName: "localhost")
        let (other, _) = try pki.issue("other", commonName: "other")
        let (expired, expiredKey) = try pki.issue("expired", commonName: "localhost", validFrom: -3 * 86_400, validFor: 86_400)
        let trust = try GatewayHarness.makeTrustStore()
        let base = ["serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust]
        let cases: [([String], String)] = [
            (["--tls-certificate", certificate], "tls-certificate and tls-key go together"),
            (["--tls-certificate", other, "--tls-key", key], "does not match"),
            (["--tls-certificate", expired, "--tls-key", expiredKey], "expired"),
            (["--tls-certificate", "/nonexistent.pem", "--tls-key", key], "tls-certificate /nonexistent.pem: cannot be read"),
            (["--tls-certificate", certificate, "--tls-key", certificate], "not a PEM private key"),
            (["--tls-certificate", certificate, "--tls-key", key, "--h2c"], "h2c is for a plain listener"),
            (["--tls-certificate", certificate, "--tls-key", key, "--tls-client-auth", "require"], "tls-client-ca is not set"),
            (["--tls-client-ca", pki.caPath, "--tls-client-auth", "optional"], "tls-certificate is not"),
            (["--upstream-tls-certificate", certificate, "--upstream-tls-key", key], "no upstream is an https:// URL"),
        ]
        let https = ["serve", "--upstream", "https://127.0.0.1:1", "--trust-store", trust]
        let plain = ["serve", "--upstream", "http://127.0.0.1:1", "--trust-store", trust]
        let whole: [([String], String)] = [
            (https + ["--upstream-ca", "/nonexistent/ca.pem"], "upstream-ca /nonexistent/ca.pem: cannot be read"),
            (
                https + ["--upstream-tls-certificate", certificate, "--upstream-tls-key", "/nonexistent/key.pem"],
                "upstream-tls-key /nonexistent/key.pem"
            ),
            (https + ["--upstream-ca", key], "upstream-ca"),
            (https + ["--upstream-tls-certificate", expired, "--upstream-tls-key", expiredKey], "upstream-tls-certificate \(expired): expired on"),
            (https + ["--upstream-tls-certificate", other, "--upstream-tls-key", key], "upstream-tls-key \(key) does not match"),
            (
                plain + ["--port", "18443", "--plain-port", "18443", "--tls-certificate", certificate, "--tls-key", key],
                "plain-port 18443 is the TLS listener's port too"
            ),
        ]
        for (arguments, message) in cases.map({ (base + $0.0, $0.1) }) + whole {
            let run = try SamlgateProcess.run(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }
}
