import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import NIOPosix
import RESP
import ServerSupport
import Testing

/// The shared replay store through the real interface: exchanges over HTTP to gateways whose
/// `replay-store` is a real `redis-server` each test starts on a free loopback port (and stops).
@Suite("Shared replay store (Redis)")
struct SharedReplayStoreTests {
    static func fresh() -> String {
        GatewayHarness.base64(GatewayHarness.issue())
    }

    static func redisStore(_ url: String, failure: ReplayStoreFailurePolicy = .closed, timeout: Double = 2) -> (inout GatewayConfiguration) -> Void {
        { configuration in
            try! configuration.apply(.replayStore, value: url, source: "test")
            configuration.replayStoreFailure = failure
            configuration.replayStoreTimeout = TestTiming.seconds(timeout)
        }
    }

    /// One command to the test's Redis, with the client under test's own module.
    static func command(_ url: String, _ command: RESPCommand) async throws -> RESPValue {
        let client = try RESPClient(
            url: RedisURL(parsing: url), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: .seconds(2), commandTimeout: .seconds(2))
        defer { Task { await client.shutdown() } }
        return try await client.submit(command, on: MultiThreadedEventLoopGroup.singleton.next()).get()
    }

    /// What Redis holds.
    static func keys(_ url: String) async throws -> [String] {
        guard case .array(let items) = try await command(url, RESPCommand("KEYS", "*")) else { return [] }
        return items.compactMap { if case .bulkString(let bytes) = $0 { String(buffer: bytes) } else { nil } }
    }

    @Test("accepted once, then refused as replayed; nothing of the assertion is readable in Redis; the record ends with the assertion")
    func acceptedThenReplayed() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.redisStore(redis.url)) { h in
                let before = Date()
                let issued = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
                let xml = GatewayHarness.issue { $0.now = issued }
                let saml = GatewayHarness.base64(xml)
                #expect(try await h.exchangeV1(saml).status == 204)
                ErrorCodeTests.expectError(try await h.exchangeV1(saml, device: "other-device"), 400, "replayed", .invalidParameterSAMLResponse)
                #expect(h.upstream?.store.exchanges.count == 1)
                let keys = try await Self.keys(redis.url)
                #expect(keys.count == 1)
                let key = keys.first ?? ""
                #expect(key.hasPrefix("samlgate:replay:") && key.count == "samlgate:replay:".count + 64, "\(key)")
                let text = String(decoding: xml, as: UTF8.self)
                let assertionID =
                    text.range(of: "<saml:Assertion").flatMap { text[$0.upperBound...].range(of: "ID=\"") }
                    .map { text[$0.upperBound...].prefix { $0 != "\"" } } ?? ""
                #expect(!assertionID.isEmpty && !key.contains(assertionID))
                // NotOnOrAfter (issued + the test IdP's 300 s) plus the gateway's 120 s skew, as a
                // lifetime from the gateway's clock: what is left of it lies between the expiry
                // seen from after the PTTL and from before the exchange (a millisecond either
                // side for rounding). The window is the test's own duration: an expiry off by
                // the skew, or by any Redis clock difference, falls outside.
                let expiry = (issued.timeIntervalSince1970 + 300 + 120) * 1000
                let ttl = try await Self.command(redis.url, RESPCommand("PTTL", key))
                let after = Date()
                guard case .integer(let left) = ttl else {
                    Issue.record("PTTL answered \(ttl)")
                    return
                }
                let lowest = Int64(expiry - after.timeIntervalSince1970 * 1000) - 1
                let highest = Int64(expiry - before.timeIntervalSince1970 * 1000) + 1
                #expect(left >= lowest && left <= highest, "PTTL \(left) outside \(lowest)...\(highest)")
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(metrics.contains("samlgate_replay_store_duration_seconds_count 2"), "\(metrics)")
                #expect(metrics.contains("samlgate_verification_failures_total{code=\"replayed\",mvpd=\"\(GatewayHarness.mvpd)\"} 1"))
                #expect(metrics.contains("samlgate_exchanges_total{mvpd=\"\(GatewayHarness.mvpd)\",outcome=\"refused\"} 1"))
                #expect(metrics.contains("samlgate_replay_store_up 1"), "\(metrics)")
            }
        }
    }

    @Test("two gateways sharing one Redis: a response accepted by one is refused as a replay by the other")
    func twoReplicas() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.redisStore(redis.url)) { first in
                try await withHarness(configure: Self.redisStore(redis.url)) { second in
                    let saml = Self.fresh()
                    #expect(try await first.exchangeV1(saml).status == 204)
                    ErrorCodeTests.expectError(try await second.exchangeV1(saml), 400, "replayed", .invalidParameterSAMLResponse)
                    #expect(second.upstream?.store.exchanges.isEmpty == true)
                    // And the other way round.
                    let other = Self.fresh()
                    #expect(try await second.exchangeV1(other).status == 204)
                    ErrorCodeTests.expectError(try await first.exchangeV1(other), 400, "replayed", .invalidParameterSAMLResponse)
                }
            }
        }
    }

    @Test("Redis down, closed: 503 replay_store_unavailable with Retry-After, nothing forwarded; restarted: recovers without a gateway restart")
    func downClosedThenRestarted() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.redisStore(redis.url)) { h in
                #expect(try await h.exchangeV1(Self.fresh()).status == 204)
                redis.stop()
                for _ in 0..<3 {
                    let refused = try await h.exchangeV1(Self.fresh())
                    ErrorCodeTests.expectError(refused, 503, "replay_store_unavailable", .networkConnectionTimeout)
                    #expect(refused.headers.first(name: "Retry-After") == "1")
                    #expect(refused.json?["action"] as? String == "retry")
                }
                #expect(h.upstream?.store.exchanges.count == 1)
                let ready = try await h.send(.GET, "/readyz")
                #expect(ready.status == 200)
                #expect(ready.json?["replayStore"] as? String == "down", "\(ready.body)")
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(metrics.contains("samlgate_errors_total{code=\"replay_store_unavailable\"} 3"), "\(metrics)")
                #expect(metrics.contains("samlgate_replay_store_errors_total{kind="))

                try await redis.start()
                var status = 0
                for _ in 0..<60 where status != 204 {
                    status = try await h.exchangeV1(Self.fresh()).status
                    if status != 204 { try await Task.sleep(for: .seconds(TestTiming.seconds(0.1))) }
                }
                #expect(status == 204)
                let saml = Self.fresh()
                #expect(try await h.exchangeV1(saml).status == 204)
                ErrorCodeTests.expectError(try await h.exchangeV1(saml), 400, "replayed", .invalidParameterSAMLResponse)
                let readyAgain = try await h.send(.GET, "/readyz")
                #expect(readyAgain.json?["replayStore"] as? String == "up")
            }
        }
    }

    @Test("Redis down, open: the exchange is accepted unrecorded and counted")
    func downOpen() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.redisStore(redis.url, failure: .open)) { h in
                redis.stop()
                let saml = Self.fresh()
                #expect(try await h.exchangeV1(saml).status == 204)
                // Unrecorded: the same response goes through again while the store is down.
                #expect(try await h.exchangeV1(saml, device: "other-device").status == 204)
                #expect(h.upstream?.store.exchanges.count == 2)
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(metrics.contains("samlgate_replay_store_unrecorded_total 2"), "\(metrics)")
            }
        }
    }

    @Test("AUTH and SELECT: with a password and a database in the URL, the record lands in that database")
    func authAndSelect() async throws {
        try await RedisServerProcess.with(arguments: ["--requirepass", "gate-secret"]) { redis in
            let url = "redis://:gate-secret@127.0.0.1:\(redis.port)/5"
            try await withHarness(configure: Self.redisStore(url)) { h in
                let saml = Self.fresh()
                #expect(try await h.exchangeV1(saml).status == 204)
                ErrorCodeTests.expectError(try await h.exchangeV1(saml), 400, "replayed", .invalidParameterSAMLResponse)
                #expect(try await Self.keys(url).count == 1)
                #expect(try await Self.keys("redis://:gate-secret@127.0.0.1:\(redis.port)/0").isEmpty)
            }
            // A wrong password cannot record: closed answers 503.
            try await withHarness(configure: Self.redisStore("redis://:wrong@127.0.0.1:\(redis.port)/5")) { h in
                ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
            }
        }
    }

    @Test("a store that accepts the connection but never answers: 503 after the command timeout, nothing forwarded")
    func commandTimeout() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        try await withHarness(configure: Self.redisStore("redis://127.0.0.1:\(silent.localAddress!.port!)", timeout: 0.2)) { h in
            ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            #expect(try await h.send(.GET, "/metrics").body.contains("samlgate_replay_store_errors_total{kind=\"timeout\"} 1"))
        }
        try await silent.close()
    }

    /// A replay refused as one: `400 replayed` (a 503 or any other refusal is not that).
    static func expectReplayed(_ reply: GatewayHarness.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
        ErrorCodeTests.expectError(reply, 400, "replayed", .invalidParameterSAMLResponse, sourceLocation: sourceLocation)
    }

    /// `samlgate_replay_store_errors_total{kind="<kind>"}`, 0 when absent.
    static func errorCount(_ h: GatewayHarness, kind: String) async throws -> Int {
        let metrics = try await h.send(.GET, "/metrics").body
        let prefix = "samlgate_replay_store_errors_total{kind=\"\(kind)\"} "
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// Exchanges fresh responses until one is accepted (the store's reconnection backs off), at most ~6 s.
    static func eventuallyAccepted(_ h: GatewayHarness) async throws -> Bool {
        for _ in 0..<60 {
            if try await h.exchangeV1(Self.fresh()).status == 204 { return true }
            try await Task.sleep(for: .seconds(TestTiming.seconds(0.1)))
        }
        return false
    }

    @Test(
        "failover: the old primary, now a replica, answers -READONLY: 503, counted as unavailable, /readyz down, the connection dropped; promoted again, exchanges recover"
    )
    func readOnlyAfterFailover() async throws {
        try await RedisServerProcess.with { redis in
            try await RedisServerProcess.with { other in
                try await withHarness(configure: Self.redisStore(redis.url)) { h in
                    #expect(try await h.exchangeV1(Self.fresh()).status == 204)
                    #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "up")
                    #expect(try await Self.command(redis.url, RESPCommand("REPLICAOF", "127.0.0.1", String(other.port))) == .simpleString("OK"))
                    let refused = try await h.exchangeV1(Self.fresh())
                    ErrorCodeTests.expectError(refused, 503, "replay_store_unavailable", .networkConnectionTimeout)
                    #expect(h.upstream?.store.exchanges.count == 1)
                    #expect(try await Self.errorCount(h, kind: "unavailable") == 1)
                    // Down, and the probe /readyz sends (SET NX PX, not PING) keeps it down.
                    for _ in 0..<3 {
                        let ready = try await h.send(.GET, "/readyz")
                        #expect(ready.status == 200)
                        #expect(ready.json?["replayStore"] as? String == "down", "\(ready.body)")
                        try await Task.sleep(for: .seconds(TestTiming.seconds(0.15)))
                    }
                    // Promoted back (what a DNS name or Service would now lead to): the store
                    // reconnects by itself, no gateway restart.
                    #expect(try await Self.command(redis.url, RESPCommand("REPLICAOF", "NO", "ONE")) == .simpleString("OK"))
                    #expect(try await Self.eventuallyAccepted(h))
                    #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "up")
                }
            }
        }
    }

    @Test(
        "-LOADING, -MASTERDOWN, -NOAUTH to SET: 503, counted as unavailable, /readyz down, and each reconnects (a new connection per attempt after the back-off)"
    )
    func connectionErrors() async throws {
        for text in ["LOADING Redis is loading the dataset in memory", "MASTERDOWN Link with MASTER is down", "NOAUTH Authentication required."] {
            try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-\(text)\r\n" : "+PONG\r\n" }) { redis in
                try await withHarness(configure: Self.redisStore(redis.url)) { h in
                    ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                    #expect(redis.connections == 1, "\(text)")
                    try await Task.sleep(for: .seconds(TestTiming.seconds(0.25)))
                    ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                    #expect(redis.connections == 2, "\(text): \(redis.connections)")
                    // At least one per refused exchange (each is counted before its 503 is sent);
                    // in some full runs under load one more was counted, its source not pinned down.
                    let counted = try await h.send(.GET, "/metrics").body.split(separator: "\n").filter {
                        $0.hasPrefix("samlgate_replay_store_errors_total{")
                    }
                    #expect(try await Self.errorCount(h, kind: "unavailable") >= 2, "\(text): \(counted)")
                    #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down", "\(text)")
                    #expect(h.upstream?.store.exchanges.isEmpty == true)
                }
            }
        }
    }

    @Test(
        "any other failed SET counts as down: -OOM (server, connection kept) and a reply SET cannot have (protocol, connection dropped); /readyz down although PING works"
    )
    func otherFailuresAreDown() async throws {
        try await ScriptedRedis.with(reply: {
            $0.first?.uppercased() == "SET" ? "-OOM command not allowed when used memory > 'maxmemory'.\r\n" : "+PONG\r\n"
        }) { redis in
            try await withHarness(configure: Self.redisStore(redis.url)) { h in
                ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                // The -OOM reply counted as `server` at least once: under a sanitizer's slowness
                // the second command can time out instead (counted as such, connection dropped).
                #expect(try await Self.errorCount(h, kind: "server") >= 1)
                // The -OOM connection is kept: a new one only for each command that timed out.
                #expect(redis.connections == 1 + (try await Self.errorCount(h, kind: "timeout")))
                #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
                try await Task.sleep(for: .seconds(TestTiming.seconds(0.1)))
                #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
            }
        }
        try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? ":1\r\n" : "+PONG\r\n" }) { redis in
            try await withHarness(configure: Self.redisStore(redis.url)) { h in
                ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                #expect(try await Self.errorCount(h, kind: "protocol") == 1)
                ErrorCodeTests.expectError(try await h.exchangeV1(Self.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                #expect(redis.connections == 2)
                #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
                #expect(h.upstream?.store.exchanges.isEmpty == true)
            }
        }
    }

    @Test("open during an outage: one warning a second, not one per exchange; the next one says how many were left out; no SAML content logged")
    func openWarningRateLimited() async throws {
        let log = CapturedLog()
        try await RedisServerProcess.with { redis in
            try await withHarness(gatewayLogger: log.logger, configure: Self.redisStore(redis.url, failure: .open)) { h in
                redis.stop()
                let started = ContinuousClock.now
                for _ in 0..<5 { #expect(try await h.exchangeV1(Self.fresh()).status == 204) }
                let burst = ContinuousClock.now - started
                var warnings = log.lines.filter { $0.message.contains("accepted unrecorded") }
                // Five exchanges within the second: one line (more only if the burst itself
                // outlasted a second on a loaded machine).
                if burst < .milliseconds(900) {
                    #expect(warnings.count == 1, "\(warnings.map(\.metadata))")
                }
                #expect(warnings.first?.metadata["suppressed"] == "0")
                #expect(warnings.first?.metadata["code"] == "replay_store_unavailable")
                try await Task.sleep(for: .seconds(TestTiming.seconds(1.1)))
                #expect(try await h.exchangeV1(Self.fresh()).status == 204)
                warnings = log.lines.filter { $0.message.contains("accepted unrecorded") }
                let suppressed = warnings.compactMap { $0.metadata["suppressed"].flatMap { Int($0) } }.reduce(0, +)
                #expect(warnings.count + suppressed == 6, "\(warnings.map(\.metadata))")
                if burst < .milliseconds(900) {
                    #expect(warnings.count == 2 && warnings.last?.metadata["suppressed"] == "4", "\(warnings.map(\.metadata))")
                }
                let metrics = try await h.send(.GET, "/metrics").body
                #expect(metrics.contains("samlgate_replay_store_unrecorded_total 6"), "\(metrics)")
                for line in log.lines {
                    #expect(!line.metadata.values.contains { $0.contains("alice") || $0.contains("Assertion") })
                }
            }
        }
        // The throttle itself, on a clock the test drives.
        let throttle = WarningThrottle(intervalNanoseconds: 1_000)
        #expect(throttle.admit(now: 10_000) == 0)
        #expect(throttle.admit(now: 10_500) == nil)
        #expect(throttle.admit(now: 10_999) == nil)
        #expect(throttle.admit(now: 11_000) == 2)
        #expect(throttle.admit(now: 50_000) == 0)
    }

    @Test("the memory store is reported by /readyz and keeps its behaviour")
    func memoryStore() async throws {
        try await withHarness { h in
            let ready = try await h.send(.GET, "/readyz")
            #expect(ready.json?["replayStore"] as? String == "memory")
        }
    }

    @Test("replay-store settings: URLs and policies parse; a bad URL's error never repeats its password")
    func settings() throws {
        var configuration = GatewayConfiguration()
        try configuration.apply(.replayStore, value: "rediss://gate:pw@cache:6380/1", source: "test")
        #expect(configuration.replayStore.description == "rediss://gate:***@cache:6380/1")
        try configuration.apply(.replayStore, value: "memory", source: "test")
        #expect(configuration.replayStore == .memory)
        try configuration.apply(.replayStoreCA, value: "/etc/samlgate/redis-ca.pem", source: "test")
        #expect(configuration.replayStoreCA == "/etc/samlgate/redis-ca.pem")
        try configuration.apply(.replayStoreFailure, value: "open", source: "test")
        #expect(configuration.replayStoreFailure == .open)
        #expect(throws: ConfigurationError.self) { try configuration.apply(.replayStoreFailure, value: "maybe", source: "test") }
        do {
            try configuration.apply(.replayStore, value: "redis://gate:topsecret@cache:6379/notadb", source: "test")
            Issue.record("a bad URL was accepted")
        } catch {
            #expect(!error.message.contains("topsecret"), "\(error.message)")
            #expect(error.message.contains("replay-store"))
        }
    }
}
