import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import TestIdP
import Testing

/// `samlgate serve` as a real process: start-up output, configuration errors, SIGHUP reload,
/// SIGTERM graceful exit.
@Suite("samlgate serve process", .serialized)
struct ServeCommandTests {
    @Test("SIGHUP reloads the trust store; SIGTERM exits 0")
    func reloadAndTerminate() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        let (process, url, line, _) = try ServerProcess.start([
            "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1",
        ])
        defer { if process.isRunning { process.terminate() } }
        // The binary runs with the allocator it links (checked inside the process, not assumed).
        // (`make sanitize` builds without jemalloc: a sanitizer brings its own allocator.)
        let sanitizing = ProcessInfo.processInfo.environment["SAMLGATE_SANITIZE"] != nil
        #expect(line.contains(sanitizing ? "\"allocator\":\"libc (built without jemalloc)\"" : "\"allocator\":\"jemalloc 5."), "\(line)")
        // The verification workers carry their own name (what `top -H` and `perf` show).
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\($0)/comm", encoding: .utf8) }
        #expect(names.contains("saml-worker-0\n"), "\(names)")
        #expect(try await ServerProcess.get(url + "/readyz").1["mvpds"] as? Int == 1)
        let second = URL(fileURLWithPath: trust).appendingPathComponent("Second")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        // Another IdP's key: one key shared by two MVPDs needs an issuer file in each.
        let secondPair = try IdPKeyPair.generate(.p256, commonName: "second IdP")
        try secondPair.certificatePEM.write(to: second.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        var mvpds = 1
        for _ in 0..<100 where mvpds != 2 {
            try await Task.sleep(for: .milliseconds(50))
            mvpds = try await ServerProcess.get(url + "/readyz").1["mvpds"] as? Int ?? 0
        }
        #expect(mvpds == 2)
        // A broken reload keeps the previous store.
        try "not a pem".write(to: second.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await ServerProcess.get(url + "/readyz").1["mvpds"] as? Int == 2)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        try? FileManager.default.removeItem(atPath: trust)
    }

    @Test("SIGTERM drains: an idle connection is closed, a request in flight gets its answer with Connection: close, exit 0")
    func drainOnTerminate() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let slow = try await FaultyUpstream.start(.slow(.milliseconds(1500)))
        let (process, url, _, _) = try ServerProcess.start(["--port", "0", "--upstream", slow.url, "--trust-store", trust, "--workers", "1"])
        defer { if process.isRunning { process.terminate() } }
        let port = Int(url.split(separator: ":").last!)!
        let idle = try RawConnection(port: port)
        try await idle.write("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try await idle.readAnswer()?.status == 200)
        let busy = try RawConnection(port: port)
        try await busy.write("POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi")
        try await Task.sleep(for: .milliseconds(300))
        kill(process.processIdentifier, SIGTERM)
        #expect(try await idle.closedByServer())
        let answer = try #require(try await busy.readAnswer())
        #expect(answer.status == 204)
        #expect(answer.head.lowercased().contains("connection: close"))
        #expect(try await busy.closedByServer())
        try await SamlgateProcess.waitForExit(process)
        #expect(process.terminationStatus == 0)
        await slow.stop()
    }

    @Test("configuration errors exit 2 and name the setting")
    func configurationErrors() throws {
        let missing = try SamlgateProcess.run(["serve", "--port", "0", "--trust-store", "/nonexistent"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("upstream"))
        let badTrust = try SamlgateProcess.run(["serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", "/nonexistent"])
        #expect(badTrust.status == 2)
        #expect(badTrust.stderr.contains("trust store"))
        let config = try SamlgateProcess.temporaryFile("bad.yaml", Data("prot: 8080\n".utf8))
        let badKey = try SamlgateProcess.run(["serve", "--config", config, "--log-format", "text"])
        #expect(badKey.status == 2)
        #expect(badKey.stderr.contains("unknown setting \"prot\""))
        let badFlag = try SamlgateProcess.run(["serve", "--queue", "lots", "--upstream", "http://x:1", "--trust-store", "/tmp"])
        #expect(badFlag.status == 2)
        #expect(badFlag.stderr.contains("--queue"))
        let badProxies = try SamlgateProcess.run([
            "serve", "--trusted-proxies", "10.0.0.0/8,10.0.0.0/33", "--upstream", "http://x:1",
            "--trust-store", "/tmp", "--log-format", "text",
        ])
        #expect(badProxies.status == 2)
        #expect(badProxies.stderr.contains("--trusted-proxies: trusted-proxies: \"10.0.0.0/33\" is not a CIDR block"), "\(badProxies.stderr)")
        // A bad Redis URL is refused without its password being repeated.
        let badStore = try SamlgateProcess.run([
            "serve", "--replay-store", "redis://gate:topsecret@cache:6379/notadb", "--upstream", "http://x:1",
            "--trust-store", "/tmp", "--log-format", "text",
        ])
        #expect(badStore.status == 2)
        #expect(badStore.stderr.contains("--replay-store"), "\(badStore.stderr)")
        #expect(!badStore.stderr.contains("topsecret"), "\(badStore.stderr)")
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let badCA = try SamlgateProcess.run([
            "serve", "--replay-store", "rediss://127.0.0.1:1", "--replay-store-ca", "/nonexistent/ca.pem",
            "--upstream", "http://x:1", "--trust-store", trust, "--log-format", "text",
        ])
        #expect(badCA.status == 2)
        #expect(badCA.stderr.contains("replay-store-ca: /nonexistent/ca.pem"), "\(badCA.stderr)")
        for (flag, value, expected) in [
            ("--help-url", "javascript:alert(1)", "an absolute http(s) URL, or none"), ("--error-details", "verbose", "reason or none"),
            ("--tracing-endpoint", "grpc://collector:4317", "an OTLP/HTTP traces URL"), ("--tracing-sample-ratio", "2", "a ratio in 0...1"),
            ("--tracing-service-name", "two words", "printable ASCII without spaces"),
            ("--throttle-exchanges", "10", "RATE/BURST"), ("--throttle-pass-through", "0/5", "RATE/BURST"),
            ("--max-connections", "lots", "an integer in 0...10000000"),
            ("--upstream", "http://svc:s3cret@127.0.0.1:9090", "upstream http://***@127.0.0.1:9090 carries a user or password"),
        ] {
            let bad = try SamlgateProcess.run([
                "serve", flag, value, "--upstream", "http://x:1", "--trust-store", trust, "--log-format", "text",
            ])
            #expect(bad.status == 2, "\(flag)")
            #expect(bad.stderr.contains(flag) && bad.stderr.contains(expected), "\(bad.stderr)")
            #expect(!bad.stderr.contains("s3cret"))
        }
    }

    @Test("an OTEL_* exporter variable malformed or asking for what is not built in stops start-up: exit 2, the variable named")
    func tracingVariables() throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        for (variable, value, expected) in [
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", "http/protobuf"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip", "none"), ("OTEL_BSP_SCHEDULE_DELAY", "soon", "milliseconds"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization", "name=value pairs"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318", "an OTLP/HTTP traces URL"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4096", "must not exceed OTEL_BSP_MAX_QUEUE_SIZE (2048)"),
        ] {
            let bad = try SamlgateProcess.run(
                [
                    "serve", "--tracing-endpoint", "http://127.0.0.1:1/v1/traces", "--upstream", "http://x:1", "--trust-store", trust,
                    "--log-format", "text",
                ], timeout: 20, environment: [variable: value])
            #expect(bad.status == 2, "\(variable)")
            #expect(bad.stderr.contains(variable) && bad.stderr.contains(expected), "\(bad.stderr)")
        }
    }

    @Test(
        "with tracing on, the start-up line names the endpoint (credentials masked) and ratio; a collector down fails no request; SIGTERM exits 0"
    )
    func tracingStartUpLine() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // Port 1 on loopback: nothing listens, every export fails.
        let (process, url, line, _) = try ServerProcess.start([
            "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
            "--tracing-endpoint", "http://ingest:t0ken@127.0.0.1:1/v1/traces?key=k3y", "--tracing-sample-ratio", "0.5",
        ])
        defer { if process.isRunning { process.terminate() } }
        #expect(line.contains("tracing to http://***@127.0.0.1:1/v1/traces?*** at ratio 0.5"), "\(line)")
        #expect(!line.contains("t0ken") && !line.contains("k3y"))
        // Traced requests (the upstream is down too: 502) and a probe all answered.
        for _ in 0..<4 { #expect(try await ServerProcess.get(url + "/api/v2/REF/configuration").0 == 502) }
        #expect(try await ServerProcess.get(url + "/healthz").0 == 200)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("the start-up line names a shared replay store with its password masked; SIGTERM still exits 0")
    func replayStoreStartUpLine() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await RedisServerProcess.with(arguments: ["--requirepass", "topsecret"]) { redis in
            let (process, url, line, _) = try ServerProcess.start([
                "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
                "--replay-store", "redis://:topsecret@127.0.0.1:\(redis.port)/2",
            ])
            defer { if process.isRunning { process.terminate() } }
            #expect(line.contains("replay store redis://:***@127.0.0.1:\(redis.port)/2"), "\(line)")
            #expect(!line.contains("topsecret"))
            #expect(try await ServerProcess.get(url + "/readyz").1["replayStore"] as? String != "memory")
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }

    @Test(
        "start-up check: a Redis that rejects SET … NX PX as an unknown command, or the URL's database, stops start-up with replay_store_unsupported (exit 2, no password shown)"
    )
    func replayStoreUnsupported() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // A generous command timeout: the check must see the refusal, not a full machine's delay.
        let common = [
            "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
            "--replay-store-timeout", "2",
        ]
        // What a Redis older than 2.6.12 (or a proxy that is not Redis) answers; AUTH is taken.
        try await ScriptedRedis.with(reply: { command in
            command.first?.uppercased() == "SET" ? "-ERR unknown command 'SET', with args beginning with: '\(command[1])' \r\n" : "+OK\r\n"
        }) { redis in
            let run = try await SamlgateProcess.runOffPool(common + ["--replay-store", "redis://:topsecret@127.0.0.1:\(redis.port)"], timeout: 30)
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("replay-store: replay_store_unsupported:"), "\(run.stderr)")
            #expect(run.stderr.contains("2.6.12") && run.stderr.contains("rejected SET"), "\(run.stderr)")
            #expect(!run.stderr.contains("topsecret") && !run.stderr.contains("samlgate:replay"), "\(run.stderr)")
            #expect(redis.commands == ["AUTH", "SET"])
        }
        // A database the server does not have (a real Redis has 16).
        try await RedisServerProcess.with(arguments: ["--requirepass", "topsecret"]) { redis in
            let run = try await SamlgateProcess.runOffPool(common + ["--replay-store", "redis://:topsecret@127.0.0.1:\(redis.port)/99"], timeout: 30)
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("replay_store_unsupported") && run.stderr.contains("SELECT 99"), "\(run.stderr)")
            #expect(!run.stderr.contains("topsecret"), "\(run.stderr)")
        }
    }

    @Test(
        "start-up check: Redis down or refusing the password: the gateway starts and serves pass-through, logs replay_store_unavailable, /readyz reports the store down (not unknown)"
    )
    func replayStoreDownAtStartUp() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await RedisServerProcess.with(arguments: ["--requirepass", "topsecret"]) { redis in
            let nobody = try RedisServerProcess.freePort()
            for store in ["redis://127.0.0.1:\(nobody)", "redis://:wrong@127.0.0.1:\(redis.port)"] {
                let (process, url, line, _) = try ServerProcess.start([
                    "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
                    "--replay-store", store,
                ])
                defer { if process.isRunning { process.terminate() } }
                #expect(line.contains("listening"), "\(line)")
                let (status, ready) = try await ServerProcess.get(url + "/readyz")
                #expect(status == 200)
                // The start-up check asked: `down`, where nothing asked would be `unknown`.
                #expect(ready["replayStore"] as? String == "down", "\(store): \(ready)")
                #expect(try await ServerProcess.get(url + "/healthz").0 == 200)
                kill(process.processIdentifier, SIGTERM)
                try await SamlgateProcess.waitForExit(process)
                #expect(process.terminationStatus == 0)
            }
        }
    }

    @Test("as an unprivileged user (as the container images run it) the gateway reaches Redis: the store up")
    func replayStoreUnprivileged() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // Readable by `nobody`, as a mounted trust store is by the image's user.
        try Process.run(URL(fileURLWithPath: "/bin/chmod"), arguments: ["-R", "a+rX", trust]).waitUntilExit()
        try await RedisServerProcess.with { redis in
            let (process, url, line, _) = try ServerProcess.start(
                [
                    "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
                    "--replay-store", redis.url,
                ], unprivileged: true)
            defer { if process.isRunning { process.terminate() } }
            #expect(line.contains("listening"), "\(line)")
            let (status, ready) = try await ServerProcess.get(url + "/readyz")
            #expect(status == 200 && ready["replayStore"] as? String == "up", "\(ready)")
            kill(process.processIdentifier, SIGTERM)
            try await SamlgateProcess.waitForExit(process)
        }
    }

    @Test("start-up check logs why the store is not usable, with its code, and never the password; unreachable Sentinels named")
    func replayStoreStartUpLog() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let sentinels = try (0..<2).map { _ in try RedisServerProcess.freePort() }
        try await RedisServerProcess.with(arguments: ["--requirepass", "topsecret"]) { redis in
            let cases = [
                ("redis://:wrongsecret@127.0.0.1:\(redis.port)", "refused the login"),
                (
                    "redis-sentinel://:wrongsecret@127.0.0.1:\(sentinels[0]),127.0.0.1:\(sentinels[1])#m",
                    "no Sentinel answered (127.0.0.1:\(sentinels[0]), 127.0.0.1:\(sentinels[1]))"
                ),
            ]
            for (store, detail) in cases {
                let process = Process()
                process.executableURL = SamlgateProcess.executable
                process.arguments = [
                    "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1",
                    "--replay-store", store,
                ]
                let output = Pipe(), errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                try process.run()
                defer { if process.isRunning { process.terminate() } }
                // The check runs before the listening line.
                _ = SamlgateProcess.firstLine(of: output.fileHandleForReading)
                let written = SamlgateProcess.firstLine(of: errors.fileHandleForReading)
                let line = written.split(separator: "\n").first { $0.contains("replay store") }.map(String.init) ?? written
                let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
                #expect(json["level"] as? String == "error", "\(line)")
                #expect(json["code"] as? String == "replay_store_unavailable", "\(line)")
                #expect((json["detail"] as? String)?.contains(detail) == true, "\(line)")
                #expect(!line.contains("wrongsecret"), "\(line)")
                kill(process.processIdentifier, SIGTERM)
                try await SamlgateProcess.waitForExit(process)
            }
        }
    }
}
