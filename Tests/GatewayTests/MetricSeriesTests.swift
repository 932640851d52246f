import CLITestSupport
import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import RESP
import SAMLEncoding
import SAMLVerification
import TestIdP
import Testing

/// `/metrics` as a real Prometheus reads it. A counter that appears at its first event, already
/// counted, is invisible to `rate()` and `increase()`: every series whose label values are known
/// in advance must be there at 0 before any traffic — per route, reason, kind, result, verdict,
/// per MVPD of the trust store (and of a reload), per metadata source and upstream. Every metric
/// has its `# HELP` and `# TYPE`, and `promtool check metrics` has nothing to say.
///
/// The scrape of the dashboard's gateway, fresh, is kept in `.build/fresh-scrape.txt`:
/// scripts/check_monitoring.py (`make monitoring-check`, after `swift test` in `make test`)
/// checks that every series a panel or an alert selects is in it.
@Suite("Metric series from start-up", .serialized)
struct MetricSeriesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let freshScrape = root.appendingPathComponent(".build/fresh-scrape.txt")
    static let promtool = "/usr/bin/promtool"
    static var promtoolInstalled: Bool { FileManager.default.isExecutableFile(atPath: promtool) }

    // MARK: what the sources declare

    /// The wire forms of the `static let name = ErrorCode("wire")` declarations in the Swift
    /// files of `directory` (under Sources/), but `excluding`.
    static func declaredCodes(in directory: String, excluding: String? = nil) throws -> [String] {
        let folder = root.appendingPathComponent("Sources").appendingPathComponent(directory)
        var codes: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where file.hasSuffix(".swift") && file != excluding {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            codes += text.matches(of: /static let\s+\w+\s*=\s*ErrorCode\(\s*"([a-z0-9_]+)"\s*\)/).map { String($0.output.1) }
        }
        return codes
    }

    /// The verifier's codes: the reasons of `verification_failures_total`.
    static func verifierCodes() throws -> [String] {
        try declaredCodes(in: "SAMLVerification/Errors", excluding: "ErrorCode+TrustStore.swift")
    }

    /// Every reason a request can be refused with (the trust store's own codes never answer one).
    static func refusalCodes() throws -> [String] {
        try verifierCodes() + declaredCodes(in: "SAMLEncoding/Errors") + declaredCodes(in: "Gateway/Errors")
    }

    // MARK: reading a scrape

    /// Each sample's value by its series (`name{labels}`, as written).
    static func samples(_ scrape: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in scrape.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return samples
    }

    /// Whether a sample of `metric` (any labels) is above 0: the series exist from start-up, so
    /// "nothing happened" reads as all of them at 0.
    static func hasNonZero(_ scrape: String, _ metric: String) -> Bool {
        samples(scrape).contains { $0.key.hasPrefix(metric + "{") && $0.value != 0 }
    }

    /// The values of `label` among the series of `metric` (those whose labels include `having`).
    static func labelValues(_ scrape: String, metric: String, label: String, having: String = "") -> Set<String> {
        var values: Set<String> = []
        for series in samples(scrape).keys where series.hasPrefix(metric + "{") && (having.isEmpty || series.contains(having)) {
            for pair in series.dropFirst(metric.count + 1).dropLast().split(separator: ",") where pair.hasPrefix(label + "=\"") {
                values.insert(String(pair.dropFirst(label.count + 2).dropLast()))
            }
        }
        return values
    }

    /// Every sample belongs to a family with a non-empty `# HELP` and a `# TYPE` (a histogram's
    /// `_bucket`, `_sum` and `_count` to the histogram's).
    static func expectHelpAndType(_ scrape: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var helps: [String: String] = [:]
        var types: [String: String] = [:]
        for line in scrape.split(separator: "\n") where line.hasPrefix("# ") {
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count >= 3 else { continue }
            if parts[1] == "HELP" { helps[String(parts[2])] = parts.count > 3 ? String(parts[3]) : "" }
            if parts[1] == "TYPE" { types[String(parts[2])] = parts.count > 3 ? String(parts[3]) : "" }
        }
        var families: Set<String> = []
        for series in samples(scrape).keys {
            let name = String(series.prefix { $0 != "{" })
            var family = name
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) && types[String(name.dropLast(suffix.count))] == "histogram" {
                family = String(name.dropLast(suffix.count))
            }
            families.insert(family)
        }
        #expect(families.count >= 25, "\(families.sorted())", sourceLocation: sourceLocation)
        for family in families.sorted() {
            #expect(helps[family].map { !$0.isEmpty } == true, "\(family) has no # HELP", sourceLocation: sourceLocation)
            #expect(types[family] != nil, "\(family) has no # TYPE", sourceLocation: sourceLocation)
        }
    }

    /// `promtool check metrics` on `scrape`: its exit status and what it printed.
    static func promtoolCheck(_ scrape: String) async throws -> (status: Int32, output: String) {
        let input = try SamlgateProcess.temporaryFile("scrape-\(UUID().uuidString).txt", Data(scrape.utf8))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool)
        process.arguments = ["check", "metrics"]
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try await SamlgateProcess.waitForExit(process)
        return (process.terminationStatus, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    // MARK: the series expected

    /// The routes a throttle counts: the exchanges and every route forwarded as it comes.
    static let throttledRoutes = [
        "v1_tokens_authn", "v2_profiles_sso", "v1_token_check", "proxy", "v2_sessions_sso", "v2_profiles", "v2_decisions", "v2_logout",
    ]
    static let partnerStatusRoutes = ["v2_profiles_sso", "v2_sessions_sso", "v2_profiles", "v2_decisions", "v2_logout"]
    static let partnerStatusVerdicts = [
        "granted", "denied", "restricted", "undetermined", "permission_error", "provider_error", "provider_undetermined", "expired",
        "unreadable", "absent",
    ]

    /// What a trust-store load makes for `mvpd`: its exchanges by outcome, the verifier's
    /// refusals by reason, a count per key, and with `reportOnly` what enforcing would have
    /// refused by reason.
    static func mvpdSeries(_ mvpd: String, keys: [String], reportOnly: Bool) throws -> [String] {
        var series = ["forwarded", "refused"].map { "samlgate_exchanges_total{mvpd=\"\(mvpd)\",outcome=\"\($0)\"}" }
        series += try verifierCodes().map { "samlgate_verification_failures_total{code=\"\($0)\",mvpd=\"\(mvpd)\"}" }
        series += keys.map { "samlgate_verifications_by_key_total{mvpd=\"\(mvpd)\",key=\"\($0)\"}" }
        if reportOnly { series += try refusalCodes().map { "samlgate_report_only_total{mvpd=\"\(mvpd)\",reason=\"\($0)\"}" } }
        return series
    }

    /// Every series of a known label value on a fresh report-only gateway before any traffic, but
    /// the MVPDs' (``mvpdSeries(_:keys:reportOnly:)``).
    static func knownSeries(upstream: String) throws -> [String] {
        var series = try refusalCodes().map { "samlgate_errors_total{code=\"\($0)\"}" }
        series += throttledRoutes.map { "samlgate_throttled_total{route=\"\($0)\"}" }
        series += ["total", "per_client"].map { "samlgate_connections_refused_total{reason=\"\($0)\"}" }
        series += ["ok", "failed"].map { "samlgate_trust_store_reloads_total{result=\"\($0)\"}" }
        series += RESPError.Kind.allCases.map { "samlgate_replay_store_errors_total{kind=\"\($0.rawValue)\"}" }
        series += SAMLForm.allCases.map { "samlgate_saml_forms_total{form=\"\($0.rawValue)\"}" }
        series += partnerStatusRoutes.flatMap { route in
            partnerStatusVerdicts.map { "samlgate_partner_status_total{route=\"\(route)\",verdict=\"\($0)\"}" }
        }
        series += ["connection", "exchange", "trip"].map { "samlgate_state_errors_total{machine=\"\($0)\"}" }
        series += ["connect", "timeout", "broken", "invalid_response"].map {
            "samlgate_upstream_errors_total{upstream=\"\(upstream)\",kind=\"\($0)\"}"
        }
        series += ["samlgate_upstream_duration_seconds_count{upstream=\"\(upstream)\"}"]
        series += ["parse", "verify", "encode", "queue", "total"].map { "samlgate_stage_duration_seconds_count{stage=\"\($0)\"}" }
        series += [
            "samlgate_signature_preserving_forwards_total", "samlgate_equivalent_normalized_forwards_total", "samlgate_replay_store_unrecorded_total",
            "samlgate_dropped_header_names_total", "samlgate_replay_store_duration_seconds_count",
        ]
        series += try mvpdSeries("unknown", keys: [], reportOnly: true)
        return series
    }

    /// The harness IdP's key as the metrics name it.
    static let harnessKey = try! TrustedKey(pem: GatewayHarness.idpPair.certificatePEM).shortFingerprint

    // MARK: tests

    @Test("a fresh gateway has every series of a known label value at 0 before any traffic, a reload those of its new MVPD")
    func freshSeriesAtZero() async throws {
        let verifierCodes = try Self.verifierCodes()
        let refusalCodes = try Self.refusalCodes()
        #expect(verifierCodes.count >= 30 && refusalCodes.count >= 60, "the code declarations were not read")
        try await withHarness(configure: { $0.mode = .reportOnly }) { h in
            let scrape = try await h.send(.GET, "/metrics").body
            let samples = Self.samples(scrape)
            var expected = try Self.knownSeries(upstream: h.upstreamURL)
            expected += try Self.mvpdSeries(GatewayHarness.mvpd, keys: [Self.harnessKey], reportOnly: true)
            for series in expected {
                #expect(samples[series] == 0, "\(series) is \(samples[series].map { "\($0)" } ?? "absent") on a fresh gateway")
            }
            // The sources' codes exactly: none missing, none misspelt.
            #expect(Self.labelValues(scrape, metric: "samlgate_errors_total", label: "code") == Set(refusalCodes))
            let failureCodes = Self.labelValues(scrape, metric: "samlgate_verification_failures_total", label: "code", having: "mvpd=\"unknown\"")
            #expect(failureCodes == Set(verifierCodes))
            Self.expectHelpAndType(scrape)

            // A reload brings an MVPD: its series, at 0, from the reload on.
            let other = "OtherCable"
            let pair = try IdPKeyPair.generate(.p256, commonName: "second IdP")
            let directory = URL(fileURLWithPath: h.trustDirectory).appendingPathComponent(other)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try pair.certificatePEM.write(to: directory.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
            #expect(h.gateway.core.reloadTrustStore())
            let reloaded = Self.samples(try await h.send(.GET, "/metrics").body)
            let key = try TrustedKey(pem: pair.certificatePEM).shortFingerprint
            for series in try Self.mvpdSeries(other, keys: [key], reportOnly: true) {
                #expect(reloaded[series] == 0, "\(series) is \(reloaded[series].map { "\($0)" } ?? "absent") after the reload that brought \(other)")
            }
            #expect(reloaded["samlgate_trust_store_reloads_total{result=\"ok\"}"] == 1)
            #expect(reloaded["samlgate_trust_store_reloads_total{result=\"failed\"}"] == 0)
        }
    }

    /// A gateway with all the dashboard and the alert rules watch — an MVPD whose keys come from
    /// fetched metadata, a shared replay store, report-only, active health checks (their first
    /// probe's failure takes nothing out of rotation), TLS served, and a second upstream over
    /// `https://` with `upstream-ca` (nothing listens there: the upstream TLS series are what it
    /// brings; the reference upstream answers) — once the metadata's first fetch has
    /// brought the keys (before it the MVPD has none, nor expiry gauges), and before any client
    /// request.
    static func withDashboardGateway(_ body: (GatewayHarness) async throws -> Void) async throws {
        // Serving TLS, as the dashboard's TLS panels and alerts need.
        let pki = try TestPKI()
        let (certificate, key) = try pki.issue("server", commonName: "localhost")
        let client = try pki.client()
        do {
            try await MetadataServer.withServedStore(refresh: "3600") { _, store, cache in
                try await RedisServerProcess.with { redis in
                    try await withHarness(
                        tlsClient: client,
                        configure: {
                            $0.tlsCertificate = certificate
                            $0.tlsKey = key
                            $0.trustStore = store
                            $0.metadataCache = cache
                            $0.mode = .reportOnly
                            $0.upstreamHealthPath = "/"
                            $0.upstreamHealthInterval = 60
                            $0.upstreams.append("https://127.0.0.1:9")
                            $0.upstreamCA = pki.caPath
                            SharedReplayStoreTests.redisStore(redis.url)(&$0)
                        }
                    ) { h async throws in
                        let fetched = try await RemoteMetadataTests.eventually {
                            let scrape = try await h.send(.GET, "/metrics").body
                            return scrape.contains("samlgate_trust_metadata_expiry_seconds{")
                                && scrape.contains("samlgate_metadata_last_refresh_timestamp_seconds{")
                        }
                        #expect(fetched, "the metadata's first fetch")
                        try await body(h)
                    }
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test("the dashboard's gateway, fresh: every metric the dashboard and the alerts name, each source's series at 0; kept for the monitoring check")
    func dashboardGatewayScrape() async throws {
        var scrape = ""
        try await Self.withDashboardGateway { h in
            scrape = try await h.send(.GET, "/metrics").body
        }
        let samples = Self.samples(scrape)
        let source = GatewayHarness.mvpd
        for result in ["updated", "unchanged", "failed", "suppressed"] {
            #expect(samples["samlgate_metadata_refetch_total{source=\"\(source)\",result=\"\(result)\"}"] == 0, "refetch \(result)")
        }
        for reason in ["network", "timeout", "http_status", "redirect_refused", "too_large", "invalid", "rollback", "cache"] {
            #expect(samples["samlgate_metadata_refresh_failures_total{source=\"\(source)\",reason=\"\(reason)\"}"] == 0, "failures \(reason)")
        }
        for result in ["updated", "not_modified", "failed"] {
            #expect(samples["samlgate_metadata_refresh_total{source=\"\(source)\",result=\"\(result)\"}"] != nil, "refresh \(result)")
        }
        #expect(samples["samlgate_metadata_refresh_total{source=\"\(source)\",result=\"failed\"}"] == 0)
        #expect(samples["samlgate_replay_store_up"] != nil)
        let exposed = MonitoringMetricsTests.exposed(scrape)
        for name in try MonitoringMetricsTests.namedMetrics().sorted() {
            #expect(exposed.contains(name), "\(name) is named in deploy/monitoring but not in a fresh gateway's /metrics")
        }
        Self.expectHelpAndType(scrape)
        try FileManager.default.createDirectory(at: Self.freshScrape.deletingLastPathComponent(), withIntermediateDirectories: true)
        try scrape.write(to: Self.freshScrape, atomically: true, encoding: .utf8)
    }

    @Test(
        "promtool check metrics finds nothing to say of the scrape, fresh and after traffic",
        .enabled(
            if: MetricSeriesTests.promtoolInstalled,
            "promtool not found at /usr/bin/promtool: make deps installs it (Debian's prometheus package)"))
    func promtoolIsClean() async throws {
        try await Self.withDashboardGateway { h in
            var scrapes = [try await h.send(.GET, "/metrics").body]
            #expect(try await h.exchangeV1(RemoteMetadataTests.signed(GatewayHarness.idp)).status == 204)
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            _ = try await h.exchangeV1(GatewayHarness.base64(forged))
            _ = try await h.send(.GET, "/api/v2/REF/configuration")
            scrapes.append(try await h.send(.GET, "/metrics").body)
            for (index, scrape) in scrapes.enumerated() {
                let (status, output) = try await Self.promtoolCheck(scrape)
                #expect(status == 0 && output.isEmpty, "scrape \(index): promtool check metrics: \(status)\n\(output)")
            }
        }
    }
}
