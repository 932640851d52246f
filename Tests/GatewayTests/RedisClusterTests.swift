import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import RESP
import Synchronization
import Testing

/// The replay store on a Redis Cluster (Debian's `redis-server`, three primaries on loopback,
/// always stopped): keys routed by hash slot from any seed, spread over the primaries, replays
/// refused across gateway replicas seeded at different nodes, a slot resharded under the
/// gateway's feet (`-ASK` during the migration, `-MOVED` after it) without a refusal, and the
/// start-up errors of a cluster that cannot hold the records.
@Suite("Redis Cluster as replay store", .serialized)
struct RedisClusterTests {
    typealias Store = SharedReplayStoreTests

    static let common = [
        "serve", "--port", "0", "--upstream", "http://127.0.0.1:1", "--workers", "1", "--log-format", "text", "--replay-store-timeout", "2",
    ]

    /// A cluster node, its bus on a free port of its own (by default the client port + 10,000,
    /// past 65,535 for half the ports the kernel hands out).
    static func node(bus: Int? = nil) throws -> RedisServerProcess {
        try RedisServerProcess(arguments: ["--cluster-enabled", "yes", "--cluster-port", String(try bus ?? RedisServerProcess.freePort())])
    }

    static func text(_ url: String, _ command: RESPCommand) async throws -> String {
        guard case .bulkString(let bytes) = try await Store.command(url, command) else { return "" }
        return String(buffer: bytes)
    }

    static func id(_ node: RedisServerProcess) async throws -> String {
        try await text(node.url, RESPCommand("CLUSTER", "MYID"))
    }

    /// Three primaries sharing the 16,384 slots, `cluster_state:ok` on each; always stopped. Each
    /// announces a host name too (as Kubernetes setups do), so `CLUSTER SLOTS` carries each node's
    /// metadata map, one array deeper; the gateway still connects to the announced addresses.
    static func withCluster(timeout: Int = 15_000, _ body: ([RedisServerProcess]) async throws -> Void) async throws {
        let buses = try (0..<3).map { _ in try RedisServerProcess.freePort() }
        let nodes = try buses.map {
            try RedisServerProcess(arguments: [
                "--cluster-enabled", "yes", "--cluster-port", String($0), "--cluster-node-timeout", String(timeout),
                "--cluster-announce-hostname", "localhost",
            ])
        }
        defer { for node in nodes { node.stop() } }
        for node in nodes { try await node.start() }
        // The bus port named: it is not the client port + 10,000 here.
        for (node, bus) in zip(nodes, buses).dropFirst() {
            _ = try await Store.command(nodes[0].url, RESPCommand("CLUSTER", "MEET", "127.0.0.1", String(node.port), String(bus)))
        }
        for (node, range) in zip(nodes, [("0", "5460"), ("5461", "10922"), ("10923", "16383")]) {
            _ = try await Store.command(node.url, RESPCommand("CLUSTER", "ADDSLOTSRANGE", range.0, range.1))
        }
        for node in nodes {
            let ok = try await RedisSentinelTests.eventually {
                let state = try await text(node.url, RESPCommand("CLUSTER", "INFO"))
                let slots = try await Store.command(node.url, RESPCommand("CLUSTER", "SLOTS"))
                return state.contains("cluster_state:ok") && slots.arrayCount == 3
            }
            #expect(ok, "the cluster never settled")
        }
        try await body(nodes)
    }

    static func keyCount(_ node: RedisServerProcess) async throws -> Int {
        if case .integer(let count) = try await Store.command(node.url, RESPCommand("DBSIZE")) { return Int(count) }
        return -1
    }

    @Test("two gateways seeded at different nodes: records spread over the three primaries, replays refused across gateways and slots")
    func spreadAndShared() async throws {
        try await Self.withCluster { nodes in
            try await withHarness(configure: Store.redisStore(nodes[0].url)) { (a: GatewayHarness) async throws in
                let seeds = "redis://127.0.0.1:\(nodes[1].port),127.0.0.1:\(nodes[2].port)"
                try await withHarness(configure: Store.redisStore(seeds)) { (b: GatewayHarness) async throws in
                    var responses: [String] = []
                    for index in 0..<24 {
                        let response = Store.fresh()
                        responses.append(response)
                        #expect(try await (index.isMultiple(of: 2) ? a : b).exchangeV1(response).status == 204)
                    }
                    for node in nodes { #expect(try await Self.keyCount(node) > 0, "a primary holds no record") }
                    #expect(try await nodes.asyncSum(Self.keyCount) == 24)
                    for (index, response) in responses.enumerated() {
                        Store.expectReplayed(try await (index.isMultiple(of: 2) ? b : a).exchangeV1(response))
                    }
                    let ready = try await a.send(.GET, "/readyz").json
                    #expect(ready?["replayStoreTopology"] as? String == "cluster")
                    #expect(ready?["replayStorePrimaries"] as? Int == 3 && ready?["replayStoreUncoveredSlots"] as? Int == 0, "\(ready ?? [:])")
                    #expect(try await a.metric("samlgate_replay_store_topology_refreshes_total") >= 1)
                }
            }
        }
    }

    @Test("a slot resharded while the gateway serves: ASK during the migration, MOVED after it; replays still refused, no 503")
    func reshardFollowed() async throws {
        try await Self.withCluster { nodes in
            try await withHarness(configure: Store.redisStore(nodes[0].url)) { (h: GatewayHarness) async throws in
                // Records until one lands in the first primary's slots.
                var recorded: (response: String, slot: Int)?
                for _ in 0..<40 where recorded == nil {
                    let response = Store.fresh()
                    #expect(try await h.exchangeV1(response).status == 204)
                    for key in try await Store.keys(nodes[0].url) {
                        recorded = (response, RESPHashSlot.of(ByteBuffer(string: key)))
                    }
                }
                let (response, slot) = try #require(recorded)
                let (source, target) = (nodes[0], nodes[1])
                let (sourceID, targetID) = (try await Self.id(source), try await Self.id(target))
                // The migration of `slot`: importing on the target, migrating on the source.
                _ = try await Store.command(target.url, RESPCommand("CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID))
                _ = try await Store.command(source.url, RESPCommand("CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID))
                let keys = try await Store.keys(source.url).filter { RESPHashSlot.of(ByteBuffer(string: $0)) == slot }
                _ = try await Store.command(
                    source.url,
                    RESPCommand((["MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000", "KEYS"] + keys).map { ByteBuffer(string: $0) }))
                // Mid-migration: the key is on the target, the source answers -ASK for it.
                Store.expectReplayed(try await h.exchangeV1(response))  // during the migration
                #expect(try await h.metric("samlgate_replay_store_redirects_total{kind=\"ask\"}") == 1)
                for node in nodes {
                    _ = try await Store.command(node.url, RESPCommand("CLUSTER", "SETSLOT", String(slot), "NODE", targetID))
                }
                // After: -MOVED, followed; the record is where the slot now is.
                Store.expectReplayed(try await h.exchangeV1(response))  // after the reshard
                #expect(try await h.metric("samlgate_replay_store_redirects_total{kind=\"moved\"}") >= 1)
                #expect(try await h.exchangeV1(Store.fresh()).status == 204)
                #expect(try await Store.errorCount(h, kind: "cluster") == 0)
            }
        }
    }

    @Test("a primary killed, its replica promoted by the cluster: the gateway finds the new primary; records kept, replays refused")
    func primaryFailover() async throws {
        try await Self.withCluster(timeout: 1000) { nodes in
            // A replica of the first primary, linked before anything is recorded.
            let bus = try RedisServerProcess.freePort()
            let replica = try RedisServerProcess(arguments: [
                "--cluster-enabled", "yes", "--cluster-port", String(bus), "--cluster-node-timeout", "1000",
            ])
            defer { replica.stop() }
            try await replica.start()
            _ = try await Store.command(nodes[0].url, RESPCommand("CLUSTER", "MEET", "127.0.0.1", String(replica.port), String(bus)))
            let linked = try await RedisSentinelTests.eventually {
                (try? await Store.command(replica.url, RESPCommand("CLUSTER", "REPLICATE", try await Self.id(nodes[0])))) == .simpleString("OK")
            }
            #expect(linked, "the replica never joined")
            #expect(try await RedisSentinelTests.eventually { try await RedisSentinelTests.role(replica.url).contains("master_link_status:up") })
            try await withHarness(configure: Store.redisStore(nodes[1].url)) { (h: GatewayHarness) async throws in
                var accepted: [String] = []
                for _ in 0..<12 {
                    let response = Store.fresh()
                    #expect(try await h.exchangeV1(response).status == 204)
                    accepted.append(response)
                }
                #expect(try await RedisSentinelTests.eventually { try await Self.keyCount(replica) == Self.keyCount(nodes[0]) })
                let before = try await Self.keyCount(replica)
                nodes[0].stop()
                // Promoted within the cluster's node timeout; the gateway's map follows: new
                // records land on the promoted replica (the slots of the primary killed).
                #expect(try await RedisSentinelTests.eventually { try await RedisSentinelTests.role(replica.url).contains("role:master") })
                let followed = try await RedisSentinelTests.eventually {
                    _ = try await h.exchangeV1(Store.fresh())
                    return try await Self.keyCount(replica) > before
                }
                #expect(followed, "no record reached the promoted replica")
                // Every record kept: each replay refused as a replay, none for want of a store.
                for response in accepted {
                    ErrorCodeTests.expectError(try await h.exchangeV1(response), 400, "replayed", .invalidParameterSAMLResponse)
                }
            }
        }
    }

    @Test("the shared throttle on the cluster: one budget for a client across two gateways, its script loaded where its key is")
    func sharedThrottle() async throws {
        try await Self.withCluster { nodes in
            try await withHarness(configure: SharedThrottleTests.shared(nodes[0].url)) { (first: GatewayHarness) async throws in
                try await withHarness(configure: SharedThrottleTests.shared(nodes[2].url)) { (second: GatewayHarness) async throws in
                    #expect(try await first.exchangeV1(Store.fresh()).status == 204)
                    #expect(try await second.exchangeV1(Store.fresh()).status == 204)
                    for gateway in [first, second] {
                        #expect(try await gateway.exchangeV1(Store.fresh()).status == 429)
                    }
                    var throttleKeys = 0
                    for node in nodes {
                        if case .array(let found) = try await Store.command(node.url, RESPCommand("KEYS", "samlgate:throttle:*")) {
                            throttleKeys += found.count
                        }
                    }
                    #expect(throttleKeys == 1)
                    #expect(try await first.metric("samlgate_throttle_store_unavailable_total{kind=\"cluster\"}") == 0)
                }
            }
        }
    }

    @Test("start-up: a cluster node with no slot served, or one answering -CLUSTERDOWN, stops start-up (exit 2, the problem named)")
    func unservedSlotsAtStartUp() async throws {
        let trust = try GatewayHarness.makeTrustStore()
        defer { try? FileManager.default.removeItem(atPath: trust) }
        let lonely = try Self.node()
        defer { lonely.stop() }
        try await lonely.start()
        let run = try await SamlgateProcess.runOffPool(Self.common + ["--trust-store", trust, "--replay-store", lonely.url], timeout: 30)
        #expect(run.status == 2 && run.stderr.contains("replay_store_unsupported") && run.stderr.contains("Redis Cluster"), "\(run.stderr)")
        try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-CLUSTERDOWN Hash slot not served\r\n" : "+OK\r\n" }) {
            redis in
            let down = try await SamlgateProcess.runOffPool(Self.common + ["--trust-store", trust, "--replay-store", redis.url], timeout: 30)
            #expect(down.status == 2 && down.stderr.contains("Redis Cluster"), "\(down.stderr)")
        }
    }

    @Test("a node that redirects to itself without end: five redirects followed, then 503 (open policy too), counted as cluster")
    func redirectLoop() async throws {
        let port = Mutex(0)
        try await ScriptedRedis.with(reply: { command in
            let own = port.withLock { $0 }
            switch command.first?.uppercased() {
            case "SET": return "-MOVED 1 127.0.0.1:\(own)\r\n"
            // Every slot served here: the map agrees with the redirects, which never end.
            case "CLUSTER": return "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:\(own)\r\n"
            default: return "+OK\r\n"
            }
        }) { redis in
            port.withLock { $0 = redis.port }
            try await withHarness(configure: Store.redisStore(redis.url, failure: .open)) { h in
                ErrorCodeTests.expectError(try await h.exchangeV1(Store.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                #expect(h.upstream?.store.exchanges.isEmpty == true)
                #expect(try await Store.errorCount(h, kind: "cluster") == 1)
                #expect(try await h.metric("samlgate_replay_store_redirects_total{kind=\"moved\"}") == 5, "the redirects followed per command")
            }
        }
    }

    @Test("run time, open: -CLUSTERDOWN and -TRYAGAIN get 503 (never accepted unrecorded), counted as cluster, logged")
    func clusterDownAtRunTimeOpen() async throws {
        for text in ["TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down"] {
            try await ScriptedRedis.with(reply: { $0.first?.uppercased() == "SET" ? "-\(text)\r\n" : "+OK\r\n" }) { redis in
                let log = CapturedLog()
                try await withHarness(gatewayLogger: log.logger, configure: Store.redisStore(redis.url, failure: .open)) { h in
                    for _ in 0..<3 {
                        ErrorCodeTests.expectError(try await h.exchangeV1(Store.fresh()), 503, "replay_store_unavailable", .networkConnectionTimeout)
                    }
                    #expect(h.upstream?.store.exchanges.isEmpty == true)
                    #expect(try await Store.errorCount(h, kind: "cluster") == 3)
                    #expect(try await h.metric("samlgate_replay_store_unrecorded_total") == 0)
                    let errors = log.lines.filter { $0.level == .error && $0.metadata["code"] == "replay_store_unsupported" }
                    #expect((1...3).contains(errors.count), "\(log.lines.map(\.message))")
                }
            }
        }
    }
}

extension RESPValue {
    /// The element count of an array reply (0 for anything else).
    var arrayCount: Int {
        if case .array(let items) = self { return items.count }
        return 0
    }
}

extension Array {
    /// The sum of `value` over the elements, awaited one by one.
    func asyncSum(_ value: (Element) async throws -> Int) async rethrows -> Int {
        var sum = 0
        for element in self { sum += try await value(element) }
        return sum
    }
}
