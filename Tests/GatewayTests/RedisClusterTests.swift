import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import RESP
import Testing

/// A Redis Cluster node named as the replay store: refused at start-up, and at run time its
/// redirects are never taken for an outage (neither accepted unrecorded by `open` nor
/// counted as the store being down for a moment).
@Suite("Redis Cluster as replay store")
struct RedisClusterTests {
    static let common = [
        "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--workers", "1", "--log-format", "text", "--replay-store-timeout", "2",
    ]

    @Test("start-up: a real cluster node owning every slot (the probe passes) stops start-up with replay_store_unsupported")
    func realClusterNodeAtStartUp() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        // The cluster bus listens on a port of its own (by default the client port + 10,000,
        // past 65,535 for half the ports the kernel hands out): a free one, named.
        let bus = try RedisServerProcess.freePort()
        try await RedisServerProcess.with(arguments: ["--cluster-enabled", "yes", "--cluster-port", String(bus)]) { redis in
            #expect(try await SharedReplayStoreTests.command(redis.url, RESPCommand("CLUSTER", "ADDSLOTSRANGE", "0", "16383")) == .simpleString("OK"))
            // The node serves the slots once the cluster state is ok.
            var state = ""
            for _ in 0..<100 where !state.contains("cluster_state:ok") {
                if case .bulkString(let info) = try await SharedReplayStoreTests.command(redis.url, RESPCommand("CLUSTER", "INFO")) {
                    state = String(buffer: info)
                }
                if !state.contains("cluster_state:ok") { try await Task.sleep(for: .milliseconds(50)) }
            }
            // Else the probe would meet -CLUSTERDOWN, the case of the next test, not this one's.
            #expect(state.contains("cluster_state:ok"), "\(state)")
            let run = try await SamlgateProcess.runOffPool(Self.common + ["--trust-store", trust, "--replay-store", redis.url], timeout: 30)
            #expect(run.status == 2, "\(run.stderr)")
            #expect(run.stderr.contains("replay-store: replay_store_unsupported:") && run.stderr.contains("Redis Cluster"), "\(run.stderr)")
        }
    }

    @Test("start-up: -MOVED or -CLUSTERDOWN to the probe stops start-up with replay_store_unsupported")
    func redirectAtStartUp() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        for text in ["MOVED 3999 127.0.0.1:7001", "CLUSTERDOWN Hash slot not served"] {
            try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-\(text)\r\n" : "+OK\r\n" }) { redis in
                let run = try await SamlgateProcess.runOffPool(Self.common + ["--trust-store", trust, "--replay-store", redis.url], timeout: 30)
                #expect(run.status == 2, "\(text): \(run.stderr)")
                #expect(run.stderr.contains("replay_store_unsupported") && run.stderr.contains("Redis Cluster"), "\(text): \(run.stderr)")
            }
        }
    }

    @Test("run time, open: -MOVED and -ASK to SET get 503 (never accepted unrecorded), counted as cluster, logged as replay_store_unsupported")
    func redirectAtRunTimeOpen() async throws {
        for text in ["MOVED 3999 127.0.0.1:7001", "ASK 3999 127.0.0.1:7001", "CLUSTERDOWN The cluster is down"] {
            try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-\(text)\r\n" : "+OK\r\n" }) { redis in
                let log = CapturedLog()
                try await withHarness(gatewayLogger: log.logger, configure: SharedReplayStoreTests.redisStore(redis.url, failure: .open)) { h in
                    for _ in 0..<3 {
                        ErrorCodeTests.expectError(
                            try await h.exchangeV1(SharedReplayStoreTests.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                    }
                    #expect(h.upstream?.store.exchanges.isEmpty == true)
                    #expect(try await SharedReplayStoreTests.errorCount(h, kind: "cluster") == 3)
                    #expect(try await h.metric("samlgate_replay_store_unrecorded_total") == 0)
                    let errors = log.lines.filter { $0.level == .error && $0.metadata["code"] == "replay_store_unsupported" }
                    // Logged, at most one line a second (on a loaded machine the three refusals may
                    // span more than one).
                    #expect(
                        (1...3).contains(errors.count) && errors.allSatisfy { $0.message.contains("Redis Cluster") }, "\(log.lines.map(\.message))")
                }
            }
        }
    }
}
