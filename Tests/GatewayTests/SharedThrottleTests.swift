import CLITestSupport
import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import RESP
import ServerSupport
import Testing

/// `throttle-store: shared`: the exchange throttle's buckets in the replay store's Redis, so two
/// replicas count a client once; a Redis that cannot answer lets exchanges through.
@Suite("Shared throttle", .serialized)
struct SharedThrottleTests {
    static func shared(_ url: String) -> (inout GatewayConfiguration) -> Void {
        { configuration in
            SharedReplayStoreTests.redisStore(url, failure: .open)(&configuration)
            configuration.throttleExchanges = ThrottleRate(rate: 0.001, burst: 1)
            configuration.throttleShared = true
        }
    }

    @Test("two gateways on one Redis share a client's bucket; the key holds no address in the clear")
    func twoReplicasOneBucket() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.shared(redis.url)) { first in
                try await withHarness(configure: Self.shared(redis.url)) { second in
                    #expect(try await first.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
                    #expect(try await second.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
                    for gateway in [first, second] {
                        let refused = try await gateway.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
                        #expect(refused.status == 429 && refused.headers.first(name: "Retry-After").flatMap(Int.init).map { $0 > 900 } == true)
                        #expect(try await gateway.metric("samlgate_throttled_total{route=\"v1_tokens_authn\"}") == 1)
                    }
                    let keys = try await SharedReplayStoreTests.command(redis.url, RESPCommand("KEYS", "samlgate:throttle:*"))
                    guard case .array(let found) = keys, found.count == 1, case .bulkString(let key) = found[0] else {
                        Issue.record("KEYS answered \(keys)")
                        return
                    }
                    let name = String(buffer: key)
                    #expect(name.count == "samlgate:throttle:".count + 64 && !name.contains("127"), "\(name)")
                }
            }
        }
    }

    @Test("Redis gone: exchanges go on unthrottled, counted, never refused for it")
    func failsOpen() async throws {
        try await RedisServerProcess.with { redis in
            try await withHarness(configure: Self.shared(redis.url)) { h in
                redis.stop()
                for _ in 0..<3 { #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204) }
                let body = try await h.send(.GET, "/metrics").body
                #expect(body.contains("samlgate_throttle_store_unavailable_total{kind="), "\(body)")
                #expect(!MetricSeriesTests.hasNonZero(body, "samlgate_throttled_total"), "\(body)")
            }
        }
    }

    @Test("throttle-store shared without a Redis replay store is a configuration error")
    func needsRedis() {
        var configuration = GatewayConfiguration()
        configuration.upstreams = ["http://a:1"]
        configuration.trustStore = "/tmp"
        configuration.throttleShared = true
        #expect {
            try configuration.validated()
        } throws: { error in
            (error as? ConfigurationError)?.message.contains("throttle-store is shared") == true
        }
    }
}
