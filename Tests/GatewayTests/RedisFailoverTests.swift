import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import RESP
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Nested in the Sentinel suite, which is serialized: two failovers at once on this 2-core
// machine starve the Sentinels' 500 ms failure detection and make each test the other's flake.
extension RedisSentinelTests {
    /// Records confirmed by replicas (`replay-store-replicas`, `WAIT` after each `SET`) and a primary
    /// killed under exchanges behind three Sentinels, against Debian's `redis-server` on loopback
    /// (always stopped): nothing accepted twice, every refusal a 503 the client may retry.
    @Suite("Redis failover under exchanges")
    struct RedisFailoverTests {
        typealias Store = SharedReplayStoreTests
        typealias Sentinel = RedisSentinelTests

        static func confirmed(by replicas: Int, _ url: String) -> (inout GatewayConfiguration) -> Void {
            { configuration in
                // A wait far above a replica's acknowledgement on a loaded machine (about a millisecond).
                Store.redisStore(url, timeout: 3)(&configuration)
                configuration.replayStoreReplicas = replicas
                configuration.replayStoreReplicaWait = TestTiming.seconds(1)
            }
        }

        @Test("replay-store-replicas 1: a record no replica confirms is refused 503 and removed, so the client's retry is accepted")
        func unconfirmedRecordRemoved() async throws {
            try await RedisServerProcess.with { primary in
                try await RedisServerProcess.with(arguments: ["--replicaof", "127.0.0.1", String(primary.port)]) { replica in
                    #expect(try await Sentinel.eventually { try await Sentinel.role(primary.url).contains("state=online") })
                    try await withHarness(configure: Self.confirmed(by: 1, primary.url)) { (h: GatewayHarness) async throws in
                        let first = Store.fresh()
                        let accepted = try await h.exchangeV1(first)
                        #expect(accepted.status == 204, "\(accepted.status) \(accepted.body)")
                        #expect(try await h.exchangeV1(first).status == 400, "a replay accepted")
                        #expect(try await Store.keys(replica.url).count == 1, "the record never reached the replica")

                        // The replica hangs: the primary takes the record, no replica confirms it.
                        replica.send(signal: SIGSTOP)
                        let second = Store.fresh()
                        let refused = try await h.exchangeV1(second)
                        ErrorCodeTests.expectError(refused, 503, "replay_store_unavailable", .networkConnectionTimeout)
                        #expect(try await Store.errorCount(h, kind: "unreplicated") == 1)
                        #expect(try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "down")
                        #expect(try await Sentinel.eventually { try await Store.keys(primary.url).count == 1 }, "the unconfirmed record stayed")

                        replica.send(signal: SIGCONT)
                        #expect(try await Sentinel.eventually { try await h.exchangeV1(second).status == 204 }, "the retry was never accepted")
                        #expect(try await h.exchangeV1(second).status == 400, "a replay accepted")
                        #expect(try await Sentinel.eventually { try await h.send(.GET, "/readyz").json?["replayStore"] as? String == "up" })
                    }
                }
            }
        }

        /// What the exchanges under load got: each response sent once, its status (0: no answer)
        /// and the phase it was sent in (0 before the kill, 1 the primary down, 2 back).
        actor Tally {
            private(set) var sent: [(response: String, status: Int, phase: Int)] = []
            var phase = 0
            func add(_ response: String, _ status: Int) { sent.append((response, status, phase)) }
            func next() { phase += 1 }
            var accepted: Int { sent.count { $0.status == 204 } }
        }

        @Test(
            "a primary killed under exchanges behind three Sentinels, replay-store-replicas 1: only 204s and 503s, the failover followed, every accepted response refused afterwards"
        )
        func primaryKilledUnderLoad() async throws {
            try await RedisServerProcess.with { primary in
                try await RedisServerProcess.with(arguments: ["--replicaof", "127.0.0.1", String(primary.port)]) { replica in
                    #expect(try await Sentinel.eventually { try await Sentinel.role(primary.url).contains("state=online") })
                    let sentinels = try (0..<3).map { _ in try RedisServerProcess.sentinel(monitoring: primary.port, name: "m", quorum: 2) }
                    defer { for sentinel in sentinels { sentinel.stop() } }
                    for sentinel in sentinels { try await sentinel.start() }
                    // Each Sentinel must know the two others (to elect a leader) and the replica.
                    #expect(try await Sentinel.eventually { try await Self.met(sentinels) }, "the Sentinels never met")
                    let url = "redis-sentinel://" + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "#m"
                    try await withHarness(configure: Self.confirmed(by: 1, url)) { (h: GatewayHarness) async throws in
                        let tally = Tally()
                        let running = LoadSwitch()
                        // Whatever fails below, the load stops (else the test would hang, not fail).
                        defer { running.turnOff() }
                        async let load: Void = withTaskGroup(of: Void.self) { group in
                            for _ in 0..<4 {
                                group.addTask {
                                    while running.isOn {
                                        let response = Store.fresh()
                                        await tally.add(response, (try? await h.exchangeV1(response).status) ?? 0)
                                    }
                                }
                            }
                        }
                        #expect(try await Sentinel.eventually { await tally.accepted >= 20 })
                        primary.stop()
                        await tally.next()
                        for sentinel in sentinels {
                            #expect(try await Sentinel.eventually { try await Sentinel.namedPort(sentinel) == replica.port }, "no failover")
                        }
                        // The old primary comes back empty; the Sentinels make it the new one's replica,
                        // and records are confirmed again. (Back before every Sentinel knows of the
                        // failover, it would be taken for the primary still and wipe the promoted
                        // replica: Redis's own hazard of a primary restarted without persistence.)
                        try await primary.start()
                        await tally.next()
                        let before = await tally.accepted
                        #expect(try await Sentinel.eventually { await tally.accepted >= before + 20 }, "exchanges never recovered")
                        running.turnOff()
                        await load

                        let sent = await tally.sent
                        let statuses = Set(sent.map(\.status))
                        #expect(statuses.isSubset(of: [204, 503]), "\(statuses)")
                        for (response, status, phase) in sent where status == 204 {
                            #expect(try await h.exchangeV1(response).status == 400, "an accepted response accepted again after the failover \(phase)")
                        }
                        #expect(try await h.metric("samlgate_replay_store_failovers_total") == 1)
                        #expect(try await h.send(.GET, "/readyz").json?["replayStorePrimary"] as? String == "127.0.0.1:\(replica.port)")
                    }
                }
            }
        }

        /// Whether every Sentinel knows the two others and the replica.
        static func met(_ sentinels: [RedisServerProcess]) async throws -> Bool {
            for sentinel in sentinels {
                let others = try await count(sentinel, "sentinels")
                let replicas = try await count(sentinel, "replicas")
                guard others == 2, replicas == 1 else { return false }
            }
            return true
        }

        /// How many `SENTINEL <what> m` lists (`sentinels`, `replicas`).
        static func count(_ sentinel: RedisServerProcess, _ what: String) async throws -> Int {
            guard case .array(let items) = try await Store.command(sentinel.url, RESPCommand("SENTINEL", what, "m")) else { return -1 }
            return items.count
        }
    }
}

/// A flag the load's tasks read to know when to stop.
final class LoadSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var on = true
    var isOn: Bool { lock.withLock { on } }
    func turnOff() { lock.withLock { on = false } }
}
