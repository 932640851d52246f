import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import RESP
import Testing

/// `throttle-store: shared` against a Redis that refuses the throttle's script: refused at
/// start-up with what to allow; at run time the exchanges go on (the throttle fails open) while
/// the refusal is counted, logged as an error and shown by `/readyz`. A script cache flushed under
/// a running gateway is loaded again by the next exchange. Real `redis-server`s with an ACL user
/// of the gateway's own, or a scripted Redis for what a real one cannot be made to answer.
@Suite("Shared throttle: the script refused or forgotten", .serialized)
struct SharedThrottleRefusalTests {
    static let password = "topsecret"

    /// The gateway's Redis user as deploy/kubernetes/example/redis.conf makes it: the replay
    /// store's commands and the throttle's, on their own keys only.
    static let gatewayUser = [
        "on", ">\(password)", "~samlgate:replay:*", "~samlgate:throttle:*", "resetchannels", "-@all", "+auth", "+select", "+ping", "+set",
        "+info", "+evalsha", "+script|load", "+time", "+hmget", "+hset", "+pexpire",
    ]

    /// The same user before the shared throttle: the replay store's commands only.
    static let replayStoreOnlyUser = [
        "on", ">\(password)", "~samlgate:replay:*", "resetchannels", "-@all", "+auth", "+select", "+ping", "+set", "+info",
    ]

    /// `ACL SETUSER gate <rules>` as the default user (rules add to what the user has).
    static func setGateUser(_ redis: RedisServerProcess, _ rules: [String]) async throws {
        let command = RESPCommand((["ACL", "SETUSER", "gate"] + rules).map { ByteBuffer(string: $0) })
        let reply = try await SharedReplayStoreTests.command(redis.url, command)
        #expect(reply == .simpleString("OK"), "ACL SETUSER answered \(reply)")
    }

    static func gateURL(_ port: Int) -> String { "redis://gate:\(password)@127.0.0.1:\(port)" }

    /// `samlgate serve` with the shared throttle on `url`, until it exits (at most 30 s).
    static func serve(_ url: String) async throws -> SamlgateProcess {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        return try await SamlgateProcess.runOffPool(
            [
                "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--trust-store", trust, "--workers", "1", "--log-format", "text",
                "--replay-store-timeout", "2", "--replay-store", url, "--throttle-store", "shared", "--throttle-exchanges", "1/10",
            ], timeout: 30)
    }

    /// `number_of_cached_scripts` of `INFO memory`.
    static func cachedScripts(_ redis: RedisServerProcess) async throws -> Int? {
        guard case .bulkString(let info) = try await SharedReplayStoreTests.command(redis.url, RESPCommand("INFO", "memory")) else { return nil }
        let field = "number_of_cached_scripts:"
        return String(buffer: info).split(whereSeparator: \.isNewline).first { $0.hasPrefix(field) }.flatMap { Int($0.dropFirst(field.count)) }
    }

    static func exchange(_ h: GatewayHarness) async throws -> Int {
        try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status
    }

    @Test("start-up: a Redis user with the replay store's commands only (NOPERM for the script) stops start-up, naming the ACL rules to add")
    func refusedByACLAtStartUp() async throws {
        try await RedisServerProcess.with { redis in
            try await Self.setGateUser(redis, Self.replayStoreOnlyUser)
            let run = try await Self.serve(Self.gateURL(redis.port))
            // The replay store's own check passes (SET and INFO are allowed): the throttle's stops it.
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("throttle-store: replay_store_unsupported:") && run.stderr.contains("NOPERM"), "\(run.stderr)")
            #expect(
                run.stderr.contains("~samlgate:throttle:*") && run.stderr.contains("+evalsha") && run.stderr.contains("+script|load"),
                "\(run.stderr)")
            #expect(!run.stderr.contains(Self.password) && !run.stdoutText.contains("listening"), "\(run.stderr)")
            // Nothing left in Redis by the attempt.
            #expect(try await SharedReplayStoreTests.keys(redis.url).filter { $0.hasPrefix("samlgate:throttle:") }.isEmpty)
        }
    }

    @Test("start-up: a Redis older than 5 (INFO server), or one without scripting (-ERR unknown command), stops start-up")
    func oldOrScriptlessRedisAtStartUp() async throws {
        let info = "# Server\r\nredis_version:4.0.14\r\nredis_mode:standalone\r\n"
        try await ScriptedRedis.with(reply: { command in
            command.first?.uppercased() == "INFO" ? "$\(info.utf8.count)\r\n\(info)\r\n" : "+OK\r\n"
        }) { redis in
            let run = try await Self.serve(redis.url)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(
                run.stderr.contains("throttle-store: replay_store_unsupported:") && run.stderr.contains("4.0.14")
                    && run.stderr.contains("Redis 5 or later"), "\(run.stderr)")
            // Refused on the version alone: the script is never sent to it.
            #expect(!redis.commands.contains("SCRIPT") && !redis.commands.contains("EVALSHA"), "\(redis.commands)")
        }
        try await ScriptedRedis.with(reply: { command in
            let name = command.first?.uppercased() ?? ""
            return ["SCRIPT", "EVALSHA", "EVAL"].contains(name) ? "-ERR unknown command '\(name)', with args beginning with: \r\n" : "+OK\r\n"
        }) { redis in
            let run = try await Self.serve(redis.url)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(
                run.stderr.contains("throttle-store: replay_store_unsupported:") && run.stderr.contains("SCRIPT answered ERR")
                    && run.stderr.contains("Redis 5 or later with scripting"), "\(run.stderr)")
        }
    }

    @Test("SCRIPT FLUSH under a running gateway (a Redis restart empties the cache too): the next exchange loads the script again, still throttled")
    func flushedScriptHeals() async throws {
        try await RedisServerProcess.with { redis in
            // The least-privileged user the deployment documents: start-up and the exchanges need nothing more.
            try await Self.setGateUser(redis, Self.gatewayUser)
            try await withHarness(configure: SharedThrottleTests.shared(Self.gateURL(redis.port))) { h in
                // Loaded at start-up; the probe's key is gone already.
                #expect(try await Self.cachedScripts(redis) == 1)
                #expect(try await SharedReplayStoreTests.keys(redis.url).filter { $0.hasPrefix("samlgate:throttle:") }.isEmpty)
                // The bucket holds 2 tokens and refills one every 1000 s.
                #expect(try await Self.exchange(h) == 204)
                _ = try await SharedReplayStoreTests.command(redis.url, RESPCommand("SCRIPT", "FLUSH"))
                #expect(try await Self.cachedScripts(redis) == 0)
                #expect(try await Self.exchange(h) == 204)
                #expect(try await Self.cachedScripts(redis) == 1)
                _ = try await SharedReplayStoreTests.command(redis.url, RESPCommand("SCRIPT", "FLUSH"))
                let refused = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
                #expect(refused.status == 429 && refused.headers.first(name: "Retry-After").flatMap(Int.init).map { $0 > 900 } == true)
                #expect(try await h.metric("samlgate_throttled_total{route=\"v1_tokens_authn\"}") == 1)
                // Healed inside the exchange: never counted as the store failing.
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(!metrics.contains("samlgate_throttle_store_unavailable_total"), "\(metrics)")
                #expect(try await h.send(.GET, "/readyz").json?["throttle"] as? String == "shared")
            }
        }
    }

    @Test(
        "EVALSHA revoked at run time: exchanges go on, counted as refused, logged as an error; /readyz stays 200 and says degraded (NOPERM); allowed again: throttled, /readyz clears"
    )
    func revokedAtRunTime() async throws {
        try await RedisServerProcess.with { redis in
            try await Self.setGateUser(redis, Self.gatewayUser)
            let log = CapturedLog()
            try await withHarness(gatewayLogger: log.logger, configure: SharedThrottleTests.shared(Self.gateURL(redis.port))) { h in
                let before = try await h.send(.GET, "/readyz")
                #expect(before.json?["throttle"] as? String == "shared" && before.json?["throttleRefusal"] == nil, "\(before.body)")
                #expect(try await Self.exchange(h) == 204)
                try await Self.setGateUser(redis, ["-evalsha"])
                // A working throttle would refuse the second of these (one token was left).
                for _ in 0..<3 { #expect(try await Self.exchange(h) == 204) }
                let ready = try await h.send(.GET, "/readyz")
                #expect(ready.status == 200, "\(ready.body)")
                #expect(ready.json?["throttle"] as? String == "degraded" && ready.json?["throttleRefusal"] as? String == "NOPERM", "\(ready.body)")
                #expect(try await h.metric("samlgate_throttle_store_unavailable_total{kind=\"refused\"}") == 3)
                #expect(try await h.metric("samlgate_throttled_total{route=\"v1_tokens_authn\"}") == 0)
                // At most one line a second (on a loaded machine the three may span more than one).
                let errors = log.lines.filter { $0.level == .error && $0.metadata["code"] == "replay_store_unsupported" }
                #expect((1...3).contains(errors.count) && errors.allSatisfy { $0.metadata["reply"] == "NOPERM" }, "\(log.lines.map(\.message))")
                #expect(!log.lines.contains { line in line.metadata.values.contains { $0.contains(Self.password) } })

                try await Self.setGateUser(redis, ["+evalsha"])
                #expect(try await Self.exchange(h) == 204)
                let cleared = try await h.send(.GET, "/readyz")
                #expect(cleared.json?["throttle"] as? String == "shared" && cleared.json?["throttleRefusal"] == nil, "\(cleared.body)")
                #expect(try await Self.exchange(h) == 429)
            }
        }
    }
}
