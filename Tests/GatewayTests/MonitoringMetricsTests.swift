import CLITestSupport
import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import Testing

/// The shipped dashboard and alert rules (`deploy/monitoring/`) name only metrics the gateway
/// produces: one gateway taken through every state they watch (exchanges forwarded and refused,
/// a dead upstream beside a live one, fetched metadata fetched out of turn and then failing, a
/// trust-store reload, a shared replay store that goes down under `replay-store-failure: open`,
/// an MVPD in report-only, the throttle and the connection cap reached), then every
/// `samlgate_…` name the two files use must be a metric of its `/metrics`.
@Suite("Monitoring names produced metrics", .serialized)
struct MonitoringMetricsTests {
    static let monitoring = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/monitoring")

    /// Every `samlgate_…` name in the dashboard and the alert rules.
    static func namedMetrics() throws -> Set<String> {
        var names: Set<String> = []
        for file in ["samlgate-dashboard.json", "samlgate-alerts.yaml"] {
            let text = try String(contentsOf: monitoring.appendingPathComponent(file), encoding: .utf8)
            names.formUnion(text.matches(of: /samlgate_[a-z0-9_]*[a-z0-9]/).map { String($0.output) })
        }
        return names
    }

    /// The metric names of a Prometheus text exposition: each sample's name, and each family's
    /// (`# TYPE`), so a histogram counts by its base name as well as by `_bucket`, `_sum`, `_count`.
    static func exposed(_ exposition: String) -> Set<String> {
        var names: Set<String> = []
        for line in exposition.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                names.insert(String(line.dropFirst(7).prefix { $0 != " " }))
            } else if !line.hasPrefix("#") {
                names.insert(String(line.prefix { $0 != "{" && $0 != " " }))
            }
        }
        return names
    }

    @Test("every metric the dashboard and the alert rules name is in /metrics once the gateway has been through the states they watch")
    func everyNamedMetricIsProduced() async throws {
        let named = try Self.namedMetrics()
        #expect(named.count >= 20, "\(named.sorted())")
        var exposition = ""
        try await MetadataServer.withServedStore { metadata, store, cache in
            try await RedisServerProcess.with { redis in
                try await withHarness(configure: {
                    $0.trustStore = store
                    $0.metadataCache = cache
                    // A second upstream nobody listens on: its connect failures are counted.
                    $0.upstreams.append("http://127.0.0.1:1")
                    SharedReplayStoreTests.redisStore(redis.url, failure: .open)(&$0)
                    $0.throttlePassThrough = ThrottleRate(rate: 0.001, burst: 0)
                    $0.maxConnectionsPerClient = 8
                    // Active health checks (the default interval: the dead upstream still gets its
                    // connect errors from requests), so their series are produced too.
                    $0.upstreamHealthPath = "/reference/exchanges"
                }) { h async throws in
                    // Metadata fetched, the response verified, recorded in Redis, forwarded.
                    #expect(
                        try await RemoteMetadataTests.eventually {
                            try await h.exchangeV1(RemoteMetadataTests.signed(GatewayHarness.idp)).status == 204
                        })
                    for _ in 0..<3 { _ = try await h.exchangeV1(RemoteMetadataTests.signed(GatewayHarness.idp)) }
                    let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
                    #expect(try await h.exchangeV1(GatewayHarness.base64(forged)).status == 400)
                    h.gateway.core.reloadTrustStore()
                    metadata.set(mode: .status(500))
                    #expect(
                        try await RemoteMetadataTests.eventually {
                            MetricSeriesTests.hasNonZero(try await h.send(.GET, "/metrics").body, "samlgate_metadata_refresh_failures_total")
                        })
                    // Redis gone, failure policy open: accepted unrecorded, the error counted.
                    redis.stop()
                    #expect(try await h.exchangeV1(RemoteMetadataTests.signed(GatewayHarness.idp)).status == 204)
                    // The MVPD in report-only (its mode file): a forged response forwarded and reported.
                    let mode = URL(fileURLWithPath: store).appendingPathComponent(GatewayHarness.mvpd).appendingPathComponent("mode")
                    try "report-only".write(to: mode, atomically: true, encoding: .utf8)
                    #expect(h.gateway.core.reloadTrustStore())
                    _ = try await h.exchangeV1(GatewayHarness.base64(forged))
                    // The throttle (pass-through, one token) and the connection cap, reached.
                    for _ in 0..<2 { _ = try await h.send(.GET, "/api/v2/REF/configuration") }
                    let (held, refused) = try await ThrottleTests.openUntilRefused(h, limit: 16)
                    #expect(refused && !held.isEmpty)
                    try await held[0].write("GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n")
                    exposition = try #require(try await held[0].readAnswer()).body
                }
            }
        }
        let exposed = Self.exposed(exposition)
        // This gateway speaks plain HTTP to plain upstreams (the states above are driven over raw
        // connections): the TLS series, the listener's and the upstreams', are produced by the TLS
        // tests (TLSListenerTests, TLSReloadTests) and are in the dashboard gateway's scrape
        // (MetricSeriesTests), which serves TLS and has an https:// upstream.
        for name in named.sorted() where !name.hasPrefix("samlgate_tls_") && !name.hasPrefix("samlgate_upstream_tls_") {
            #expect(exposed.contains(name), "\(name) is named in deploy/monitoring but not produced")
        }
        #expect(exposition.contains("samlgate_replay_store_up 0"), "\(exposition)")
    }
}
