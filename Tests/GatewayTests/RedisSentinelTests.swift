import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOPosix
import RESP
import Testing

/// The replay store behind Redis Sentinel (`redis-sentinel://…#masterName`), against Debian's
/// `redis-server` as primary, replica and Sentinel on loopback (always stopped): the primary is
/// found, a planned failover is followed without a restart, replays stay refused across it, and
/// the start-up errors say what is wrong.
@Suite("Redis Sentinel as replay store", .serialized)
struct RedisSentinelTests {
    typealias Store = SharedReplayStoreTests

    /// `body` gets a primary, its replica (linked) and a Sentinel monitoring them as `m`.
    static func withSentinel(_ body: (RedisServerProcess, RedisServerProcess, RedisServerProcess) async throws -> Void) async throws {
        try await RedisServerProcess.with { primary in
            try await RedisServerProcess.with(arguments: ["--replicaof", "127.0.0.1", String(primary.port)]) { replica in
                #expect(try await eventually { try await role(replica.url).contains("master_link_status:up") }, "the replica never linked")
                let sentinel = try RedisServerProcess.sentinel(monitoring: primary.port, name: "m")
                defer { sentinel.stop() }
                try await sentinel.start()
                try await body(primary, replica, sentinel)
            }
        }
    }

    static func role(_ url: String) async throws -> String {
        guard case .bulkString(let info) = try await Store.command(url, RESPCommand("INFO", "replication")) else { return "" }
        return String(buffer: info)
    }

    /// What the Sentinel names as `m`'s primary, by port.
    static func namedPort(_ sentinel: RedisServerProcess) async throws -> Int? {
        guard case .array(let items) = try await Store.command(sentinel.url, RESPCommand("SENTINEL", "get-master-addr-by-name", "m")),
            items.count == 2, case .bulkString(let port) = items[1]
        else { return nil }
        return Int(String(buffer: port))
    }

    /// Polls `condition` (every 100 ms, at most 20 s).
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        // 20 s, stretched under the sanitizers (`SAMLGATE_TEST_TIME_SCALE`).
        for _ in 0..<Int(TestTiming.seconds(20) * 10) {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    @Test("the Sentinels' primary takes the records; a planned failover is followed without a restart, replays refused across it")
    func failoverFollowed() async throws {
        try await Self.withSentinel { primary, replica, sentinel in
            let log = CapturedLog()
            let url = "redis-sentinel://127.0.0.1:\(sentinel.port)/0#m"
            try await withHarness(gatewayLogger: log.logger, configure: Store.redisStore(url)) { (h: GatewayHarness) async throws in
                let first = Store.fresh()
                #expect(try await h.exchangeV1(first).status == 204)
                Store.expectReplayed(try await h.exchangeV1(first))
                #expect(try await Store.keys(primary.url).count == 1)
                #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "up")

                // A planned failover: the replica is promoted, the old primary turns replica. The
                // Sentinel refuses it (`-NOGOODSLAVE`) until it has seen the replica answer.
                let started = try await Self.eventually {
                    (try? await Store.command(sentinel.url, RESPCommand("SENTINEL", "FAILOVER", "m"))) == .simpleString("OK")
                }
                #expect(started, "the Sentinel never took the failover")
                #expect(try await Self.eventually { try await Self.namedPort(sentinel) == replica.port }, "the Sentinel never promoted the replica")
                // Followed without a restart (+switch-master, or the poll behind it): one log line.
                let followed = try await Self.eventually { log.lines.contains { $0.message.contains("primary moved") } }
                #expect(followed, "the gateway never followed the failover")
                #expect(try await Store.eventuallyAccepted(h), "no exchange accepted after the failover")
                #expect(try await Self.role(replica.url).contains("role:master"))
                // Every record is on the new primary: the one before the failover (replicated)
                // and those after it (written there).
                #expect(try await Store.keys(replica.url).count >= 2)
                Store.expectReplayed(try await h.exchangeV1(first))  // after the failover
                #expect(try await h.metric("samlgate_replay_store_failovers_total") == 1)
                #expect(try await h.send(.GET, "/readyz").json?["replayStorePrimary"] as? String == "127.0.0.1:\(replica.port)")
                let moved = log.lines.first { $0.message.contains("primary moved") }
                #expect(moved?.metadata["to"] == "127.0.0.1:\(replica.port)", "\(log.lines.map(\.message))")
            }
        }
    }

    @Test("start-up: a master name no Sentinel knows, or a Sentinel URL without one, stops start-up (exit 2, the problem named)")
    func startUpErrors() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await Self.withSentinel { _, _, sentinel in
            let unknown = try await SamlgateProcess.runOffPool(
                RedisClusterTests.common + ["--trust-store", trust, "--replay-store", "redis-sentinel://127.0.0.1:\(sentinel.port)#nope"],
                timeout: 30)
            #expect(unknown.status == 2 && unknown.stderr.contains("monitors a primary named nope"), "\(unknown.stderr)")
            let nameless = try await SamlgateProcess.runOffPool(
                RedisClusterTests.common + ["--trust-store", trust, "--replay-store", "redis-sentinel://127.0.0.1:\(sentinel.port)"], timeout: 30)
            #expect(nameless.status == 2 && nameless.stderr.contains("needs #masterName"), "\(nameless.stderr)")
        }
    }

    @Test("a plain Redis named as a Sentinel stops start-up; every Sentinel unreachable: the gateway serves, the store reported down")
    func notSentinels() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        try await RedisServerProcess.with { redis in
            let run = try await SamlgateProcess.runOffPool(
                RedisClusterTests.common + ["--trust-store", trust, "--replay-store", "redis-sentinel://127.0.0.1:\(redis.port)#m"], timeout: 30)
            #expect(run.status == 2 && run.stderr.contains("not as a Sentinel"), "\(run.stderr)")
        }
        let nobody = try RedisServerProcess.freePort()
        try await withHarness(configure: Store.redisStore("redis-sentinel://127.0.0.1:\(nobody)#m")) { (h: GatewayHarness) async throws in
            let refused = try await h.exchangeV1(Store.fresh())
            ErrorCodeTests.expectError(refused, 503, "replay_store_unavailable", .networkConnectionTimeout)
            #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
        }
    }

    @Test(
        "a Sentinel with requirepass: asked with replay-store-sentinel-password-file; without it the store is down, the reason naming that setting"
    )
    func sentinelPassword() async throws {
        let file = TestScratch.directory("sentinel-password")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: file) }
        let passwordFile = file.appendingPathComponent("password").path
        try "s3ntinel-only\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        try await RedisServerProcess.with { primary in
            let sentinel = try RedisServerProcess.sentinel(monitoring: primary.port, name: "m", password: "s3ntinel-only")
            defer { sentinel.stop() }
            try await sentinel.start()
            let url = "redis-sentinel://127.0.0.1:\(sentinel.port)#m"
            try await withHarness(configure: { configuration in
                Store.redisStore(url)(&configuration)
                configuration.replayStoreSentinelPasswordFile = passwordFile
            }) { (h: GatewayHarness) async throws in
                #expect(try await h.exchangeV1(Store.fresh()).status == 204)
                #expect(try await h.send(.GET, "/readyz").json?["replayStorePrimary"] as? String == "127.0.0.1:\(primary.port)")
            }
            try await withHarness(configure: Store.redisStore(url)) { (h: GatewayHarness) async throws in
                ErrorCodeTests.expectError(try await h.exchangeV1(Store.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
                #expect(try await Store.errorCount(h, kind: "server") == 1)
            }
            // What the start-up check logs as the reason.
            let client = try RESPClient(
                url: RedisURL(parsing: url), eventLoopGroup: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(2),
                commandTimeout: .seconds(2))
            defer { Task { await client.shutdown() } }
            await #expect {
                _ = try await client.sentinelPrimary(on: MultiThreadedEventLoopGroup.singleton.next())
            } throws: { error in
                (error as? RESPError)?.message.contains("replay-store-sentinel-password-file") == true
            }
        }
    }

    @Test("a Sentinel naming a server that is not a primary: nothing written there (even a replica that takes writes), 503, the store down")
    func namedServerNotPrimary() async throws {
        try await RedisServerProcess.with { primary in
            let replicaArguments = ["--replicaof", "127.0.0.1", String(primary.port), "--replica-read-only", "no"]
            try await RedisServerProcess.with(arguments: replicaArguments) { replica in
                #expect(try await Self.eventually { try await Self.role(replica.url).contains("master_link_status:up") })
                // A Sentinel that names the replica (one misconfigured, or answering from before a failover).
                let port = String(replica.port)
                try await ScriptedRedis.with(reply: { command in
                    switch command.first?.uppercased() {
                    case "SENTINEL": "*2\r\n$9\r\n127.0.0.1\r\n$\(port.utf8.count)\r\n\(port)\r\n"
                    case "SUBSCRIBE": "*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n"
                    default: "-ERR unexpected\r\n"
                    }
                }) { sentinel in
                    try await withHarness(configure: Store.redisStore("redis-sentinel://127.0.0.1:\(sentinel.port)#m")) {
                        (h: GatewayHarness) async throws in
                        ErrorCodeTests.expectError(try await h.exchangeV1(Store.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                        #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
                        #expect(try await Store.keys(replica.url).isEmpty, "a record written to a server that is not a primary")
                        // The Sentinel's answer was taken (and the server it named refused for its role).
                        #expect(try await h.send(.GET, "/readyz").json?["replayStorePrimary"] as? String == "127.0.0.1:\(replica.port)")
                    }
                }
            }
        }
    }

    @Test("rediss-sentinel://: the Sentinels asked over TLS too (a TLS-only Sentinel answers), the primary reached over TLS")
    func sentinelsOverTLS() async throws {
        let directory = TestScratch.directory("samlgate-sentinel-tls")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pair = try RedisServerProcess.selfSignedCertificate(in: directory)
        try await RedisServerProcess.with(tls: pair) { primary in
            let sentinel = try RedisServerProcess.sentinel(monitoring: primary.port, name: "m", tls: pair)
            defer { sentinel.stop() }
            try await sentinel.start()
            try await withHarness(configure: { configuration in
                Store.redisStore("rediss-sentinel://127.0.0.1:\(sentinel.port)#m")(&configuration)
                configuration.replayStoreCA = pair.certificate
            }) { (h: GatewayHarness) async throws in
                let first = Store.fresh()
                #expect(try await h.exchangeV1(first).status == 204)
                ErrorCodeTests.expectError(try await h.exchangeV1(first), 400, "replayed", .invalidParameterSAMLResponse)
                #expect(try await h.send(.GET, "/readyz").json?["replayStorePrimary"] as? String == "127.0.0.1:\(primary.port)")
            }
        }
    }

    @Test("URLs: several Sentinels, the default port, credentials for the data nodes, masked when shown")
    func urls() throws {
        let url = try RedisURL(parsing: "rediss-sentinel://app:s3cret@10.0.0.1,10.0.0.2:26380,[::1]/2#main-store")
        #expect(url.sentinel?.addresses.map(\.description) == ["10.0.0.1:26379", "10.0.0.2:26380", "[::1]:26379"])
        #expect(url.sentinel?.masterName == "main-store" && url.tls && url.database == 2 && url.user == "app" && url.password == "s3cret")
        #expect(url.description == "rediss-sentinel://app:***@10.0.0.1:26379,10.0.0.2:26380,[::1]:26379/2#main-store")
        for bad in ["redis-sentinel://h:1", "redis-sentinel://h:1#", "redis-sentinel://h:99999#m", "redis-sentinel://#m", "redis-sentinel://h:1/x#m"]
        {
            #expect(throws: RESPError.self, "\(bad)") { try RedisURL(parsing: bad) }
        }
    }
}
