import CLITestSupport
import Dispatch
import Foundation
import Gateway
import GatewayTestSupport
import Testing

/// A Redis that answers `SET` with a reply that never ends, through the real interface: the
/// exchanges get the failure policy's answer, the reply decoder refuses the flood (a protocol
/// error, the connection dropped), and local answers (`/healthz`) keep being answered while it
/// runs. Before the decoder was bounded, `/healthz` could not get a connection at all during the
/// nested flood; its latency is reported here (1 ms p50 on the development VM), not asserted:
/// speed is measured in benchmarks, never in a timed test.
@Suite("Hostile Redis")
struct HostileRedisTests {
    /// A shared store on `url` with four connections per event loop, each of which the flood fills.
    static func store(_ url: String, failure: ReplayStoreFailurePolicy) -> (inout GatewayConfiguration) -> Void {
        { configuration in
            SharedReplayStoreTests.redisStore(url, failure: failure, timeout: 10)(&configuration)
            configuration.replayStoreConnections = 4
        }
    }

    /// After four `*1024` headers: 1,024 integers closing the innermost array, then the header of
    /// the next one, again and again: a reply that stays within every bound of a decoder without a
    /// byte cap and takes 1,024⁴ elements to finish.
    static let nestedFlood = String(repeating: ":1\r\n", count: 1024) + "*1024\r\n"

    /// The p50 of `/healthz` over `count` requests, in milliseconds; each must be answered `200`.
    static func healthzMedian(_ h: GatewayHarness, count: Int = 40) async throws -> Double {
        var samples: [Double] = []
        for _ in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            #expect(try await h.send(.GET, "/healthz").status == 200)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// Runs `body` while background tasks keep sending exchanges, several at once so that every
    /// Redis connection of every event loop of the gateway is flooded (each exchange makes the store send `SET`,
    /// which the scripted Redis answers with its flood); returns the exchanges' statuses.
    static func duringFlood(_ h: GatewayHarness, _ body: () async throws -> Void) async throws -> [Int] {
        let exchanges = Task {
            await withTaskGroup(of: [Int].self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        var statuses: [Int] = []
                        while !Task.isCancelled {
                            guard let reply = try? await h.exchangeV1(SharedReplayStoreTests.fresh()) else { break }
                            statuses.append(reply.status)
                            // A refused exchange returns at once: paced, so that verifying the
                            // responses does not itself take the test's two cores.
                            try? await Task.sleep(for: .milliseconds(200))
                        }
                        return statuses
                    }
                }
                var all: [Int] = []
                for await statuses in group { all += statuses }
                return all
            }
        }
        do {
            try await Task.sleep(for: .seconds(2))
            try await body()
        } catch {
            exchanges.cancel()
            _ = await exchanges.value
            throw error
        }
        exchanges.cancel()
        return await exchanges.value
    }

    @Test(
        "SET answered with an endless array nested four deep: every exchange 503 (closed), the flood refused, /healthz answered while it runs"
    )
    func endlessNestedArray() async throws {
        let header = String(repeating: "*1024\r\n", count: 4)
        try await ScriptedRedis.with(
            reply: { $0.first?.uppercased() == "SET" ? header : "+OK\r\n" }, flood: { $0.first?.uppercased() == "SET" ? Self.nestedFlood : nil }
        ) { redis in
            try await withHarness(configure: Self.store(redis.url, failure: .closed)) { h in
                var median = 0.0
                let statuses = try await Self.duringFlood(h) { median = try await Self.healthzMedian(h) }
                print("hostile Redis: /healthz p50 \(median) ms during the flood; \(statuses.count) exchanges")
                #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 503 }, "\(statuses)")
                #expect(try await SharedReplayStoreTests.errorCount(h, kind: "protocol") >= 1)
                #expect(h.upstream?.store.exchanges.isEmpty == true)
            }
        }
    }

    @Test("SET answered with a bulk string that never ends: exchanges accepted unrecorded (open), the flood refused, /healthz answered")
    func endlessBulkString() async throws {
        try await ScriptedRedis.with(
            reply: { $0.first?.uppercased() == "SET" ? "$1048576\r\n" : "+OK\r\n" }, flood: { $0.first?.uppercased() == "SET" ? "x" : nil }
        ) { redis in
            try await withHarness(configure: Self.store(redis.url, failure: .open)) { h in
                var median = 0.0
                let statuses = try await Self.duringFlood(h) { median = try await Self.healthzMedian(h) }
                print("hostile Redis: /healthz p50 \(median) ms during the flood; \(statuses.count) exchanges")
                #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 204 }, "\(statuses)")
                #expect(try await SharedReplayStoreTests.errorCount(h, kind: "protocol") >= 1)
            }
        }
    }
}
