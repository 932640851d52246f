import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import Testing

/// The backend's throttle at the edge (a token bucket per client, checked before any SAML work)
/// and the connection caps, through real HTTP on loopback.
@Suite("Throttle and connection caps")
struct ThrottleTests {
    static func port(_ h: GatewayHarness) -> Int { Int(h.gatewayURL.split(separator: ":").last!)! }

    @Test("past the burst an exchange gets 429 as the backend answers it, with Retry-After, before its body is read or verified")
    func exchangePastTheBurst() async throws {
        try await withHarness(configure: { $0.throttleExchanges = ThrottleRate(rate: 0.001, burst: 1) }) { h in
            let genuine = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(genuine).status == 204)
            #expect(try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status == 204)
            // The third, forged: refused for the rate, not for its signature (never verified).
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            let refused = try await h.exchangeV1(GatewayHarness.base64(forged))
            #expect(refused.status == 429)
            #expect(refused.headers.first(name: "Content-Type") == "text/html")
            #expect(refused.body.contains("429 Too Many Requests"))
            // 0.001 a second: the next token is ~1000 s away.
            let retry = try #require(refused.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect(retry > 900 && retry <= 1000, "\(retry)")
            #expect(try await h.metric("samlgate_throttled_total{route=\"v1_tokens_authn\"}") == 1)
            #expect(try await h.metric("samlgate_errors_total{code=\"throttled\"}") == 1)
            #expect(try await h.metric("samlgate_stage_duration_seconds_count{stage=\"verify\"}") == 2)
            #expect(try await h.metric("samlgate_verification_failures_total{code=\"key_not_trusted\",mvpd=\"\(GatewayHarness.mvpd)\"}") == 0)
            #expect(h.upstream?.store.exchanges.count == 2)
            // Pass-through is not throttled by default, nor are the gateway's own endpoints.
            for _ in 0..<20 { #expect(try await h.send(.GET, "/api/v2/REF/configuration").status != 429) }
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
    }

    @Test("a pass-through past its bucket gets 429 with Retry-After to the next token, counted under its route")
    func passThroughRefused() async throws {
        // A token every 100 s: the second request is refused however long a loaded machine
        // takes between the two.
        try await withHarness(configure: { $0.throttlePassThrough = ThrottleRate(rate: 0.01, burst: 0) }) { h in
            #expect(try await h.send(.GET, "/api/v2/REF/configuration").status != 429)
            let refused = try await h.send(.GET, "/api/v2/REF/configuration")
            #expect(refused.status == 429)
            let retry = try #require(refused.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect((1...100).contains(retry), "\(retry)")
            #expect(try await h.metric("samlgate_throttled_total{route=\"proxy\"}") == 1)
        }
    }

    @Test("tokens come back at the rate, up to burst + 1; the wait said is the time to the next one")
    func refill() {
        let throttle = ClientThrottle(ThrottleRate(rate: 2, burst: 3))
        let client = ClientKey(high: 0, low: 0x0000_FFFF_C633_6401)
        let second: UInt64 = 1_000_000_000
        var now = 5 * second
        for _ in 0..<4 { #expect(throttle.take(client, now: now) == nil) }
        let wait = throttle.take(client, now: now)
        #expect(wait.map { abs($0 - 0.5) < 1e-9 } == true, "\(String(describing: wait))")
        now += second / 2
        #expect(throttle.take(client, now: now) == nil)
        #expect(throttle.take(client, now: now) != nil)
        // Ten seconds idle refill no more than the bucket holds.
        now += 10 * second
        for _ in 0..<4 { #expect(throttle.take(client, now: now) == nil) }
        #expect(throttle.take(client, now: now) != nil)
    }

    @Test(
        "behind a trusted proxy each X-Forwarded-For client has its own bucket; addresses a client prepends make no new one; untrusted peers' X-Forwarded-For is ignored"
    )
    func keyedByClient() async throws {
        func get(_ h: GatewayHarness, _ forwardedFor: String) async throws -> Int {
            try await h.send(.GET, "/api/v2/REF/configuration", headers: [("X-Forwarded-For", forwardedFor)]).status
        }
        try await withHarness(configure: {
            $0.throttlePassThrough = ThrottleRate(rate: 0.001, burst: 0)
            $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1/32, 10.0.0.0/8")
        }) { (h: GatewayHarness) async throws in
            #expect(try await get(h, "203.0.113.1") != 429)
            #expect(try await get(h, "203.0.113.2") != 429)
            #expect(try await get(h, "203.0.113.1") == 429)
            // What a client writes left of the address a trusted proxy appended does not count.
            #expect(try await get(h, "198.51.100.7, 203.0.113.1") == 429)
            #expect(try await get(h, "garbage, 203.0.113.2") == 429)
            // A trusted proxy's own hop is skipped: the client is the one before it.
            #expect(try await get(h, "203.0.113.1, 10.1.2.3") == 429)
            // A port some proxies append makes no other client.
            #expect(try await get(h, "203.0.113.2:51234") == 429)
            // One IPv6 client is its /64 (with a port too).
            #expect(try await get(h, "2001:db8:1:2::1") != 429)
            #expect(try await get(h, "2001:db8:1:2:ffff::9") == 429)
            #expect(try await get(h, "[2001:db8:1:2::5]:443") == 429)
            #expect(try await get(h, "2001:db8:1:3::1") != 429)
        }
        try await withHarness(configure: { $0.throttlePassThrough = ThrottleRate(rate: 0.001, burst: 0) }) { (h: GatewayHarness) async throws in
            #expect(try await get(h, "203.0.113.1") != 429)
            #expect(try await get(h, "203.0.113.2") == 429)
        }
    }

    @Test("an X-Forwarded-For chain is read 32 hops from the right, no further: clients behind a longer chain of trusted hops share a key")
    func forwardedChainBound() async throws {
        try await withHarness(configure: {
            $0.throttlePassThrough = ThrottleRate(rate: 0.001, burst: 0)
            $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1/32, 10.0.0.0/8")
        }) { (h: GatewayHarness) async throws in
            func get(_ client: String, hops: Int) async throws -> Int {
                let chain = ([client] + Array(repeating: "10.1.2.3", count: hops)).joined(separator: ", ")
                return try await h.send(.GET, "/api/v2/REF/configuration", headers: [("X-Forwarded-For", chain)]).status
            }
            // Within the bound each client is its own.
            #expect(try await get("203.0.113.50", hops: 31) != 429)
            #expect(try await get("203.0.113.51", hops: 31) != 429)
            // Past it the walk stops at a trusted hop: one key for both, whatever the client wrote.
            #expect(try await get("203.0.113.52", hops: 40) != 429)
            #expect(try await get("203.0.113.53", hops: 40) == 429)
        }
    }

    @Test("the table stays bounded whatever addresses arrive: refilled buckets go first, then a flooded shard is cleared")
    func boundedTable() {
        let throttle = ClientThrottle(ThrottleRate(rate: 1, burst: 10))
        let second: UInt64 = 1_000_000_000
        var now = 5 * second
        for index in 0..<300_000 {
            #expect(throttle.take(ClientKey(high: 0, low: 0x0000_FFFF_0000_0000 | UInt64(index)), now: now) == nil)
            now += 1000
        }
        #expect(throttle.clientCount <= ClientThrottle.shardCount * ClientThrottle.shardCapacity)
        // Eleven seconds later every bucket is full again: the sweep drops them, and a client
        // that emptied its bucket since keeps it.
        now += 11 * second
        let hammering = ClientKey(high: 0x2001_0db8_0000_0001, low: 0)
        for _ in 0..<11 { #expect(throttle.take(hammering, now: now) == nil) }
        #expect(throttle.take(hammering, now: now) != nil)
        for index in 0..<(ClientThrottle.shardCount * ClientThrottle.shardCapacity / 2) {
            _ = throttle.take(ClientKey(high: 0, low: 0x0000_FFFF_0000_0000 | UInt64(1_000_000 + index)), now: now)
        }
        #expect(throttle.take(hammering, now: now) != nil, "a refilled bucket was swept, not the emptied one")
        // More new clients inside one refill time than a shard holds: the shard is cleared, the
        // emptied bucket with it — a fresh burst, the price of a bounded table.
        for index in 0..<(ClientThrottle.shardCount * ClientThrottle.shardCapacity * 2) {
            _ = throttle.take(ClientKey(high: 0, low: 0x0000_FFFF_0000_0000 | UInt64(2_000_000 + index)), now: now)
        }
        #expect(throttle.clientCount <= ClientThrottle.shardCount * ClientThrottle.shardCapacity)
        #expect(throttle.take(hammering, now: now) == nil)
    }

    @Test("a clock read out of order never refills a bucket")
    func timeOnlyMovesForward() {
        let throttle = ClientThrottle(ThrottleRate(rate: 1, burst: 0))
        let client = ClientKey(high: 0, low: 0x0000_FFFF_C633_6402)
        let second: UInt64 = 1_000_000_000
        #expect(throttle.take(client, now: 10 * second) == nil)
        // Another loop's earlier reading, arriving after: no wrapped difference, no refill.
        #expect(throttle.take(client, now: 10 * second - 1) != nil)
        #expect(throttle.take(client, now: 10 * second + second / 2) != nil)
    }

    /// Opens connections, each asking `/healthz`, until one is closed unanswered (or `limit`
    /// were answered): the ones answered, still open, and whether one was refused.
    static func openUntilRefused(_ h: GatewayHarness, limit: Int) async throws -> (held: [RawConnection], refused: Bool) {
        var held: [RawConnection] = []
        while held.count < limit {
            let connection = try RawConnection(port: port(h), readTimeout: 5)
            try? await connection.write("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n")
            guard let answer = try? await connection.readAnswer(), answer.status == 200 else { return (held, true) }
            held.append(connection)
        }
        return (held, false)
    }

    @Test("connections past max-connections-per-client or max-connections are closed at accept, and counted; a closed one frees its place")
    func connectionCaps() async throws {
        for perClient in [true, false] {
            try await withHarness(configure: {
                if perClient { $0.maxConnectionsPerClient = 3 } else { $0.maxConnections = 3 }
            }) { (h: GatewayHarness) async throws in
                // The harness's own client may hold a connection: at most three in all are answered.
                let (held, refused) = try await Self.openUntilRefused(h, limit: 4)
                #expect(refused && !held.isEmpty && held.count <= 3, "\(held.count) held")
                let reason = perClient ? "per_client" : "total"
                try await held[0].write("GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n")
                let metrics = try #require(try await held[0].readAnswer()).body
                #expect(metrics.contains("samlgate_connections_refused_total{reason=\"\(reason)\"} 1"), "\(metrics)")
                #expect(metrics.contains("samlgate_open_connections \(held.count)") || metrics.contains("samlgate_open_connections 3"))
                // Closing the held ones frees their places.
                for connection in held { connection.shutdownWrite() }
                for connection in held { _ = try? await connection.closedByServer() }
                var admitted = false
                for _ in 0..<50 where !admitted {
                    admitted = !(try await Self.openUntilRefused(h, limit: 1).refused)
                    if !admitted { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(admitted)
            }
        }
    }
}
