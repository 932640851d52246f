import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import Testing

/// Spans through the real gateway, exported over OTLP/HTTP to a receiver on loopback (the echo
/// upstream, which records every request: the backend's and the exporter's alike).
@Suite("OpenTelemetry tracing")
struct TracingTests {
    static let traceID = TraceContextTests.traceID
    static let clientParent = TraceContextTests.clientParent

    /// Runs `body` against a gateway exporting to the echo upstream's `/v1/traces`, then stops
    /// the gateway (its exporter flushes at shutdown) and returns every span exported and every
    /// request the backend got.
    static func traced(
        ratio: Double = 1, environment: [String: String] = [:], log: CapturedLog? = nil,
        configure: @escaping (inout GatewayConfiguration) -> Void = { _ in }, eachExport: (EchoUpstream.Received) -> Void = { _ in },
        _ body: (GatewayHarness) async throws -> Void
    ) async throws -> (spans: [OTLPExport.Span], resource: [String: String], backend: [EchoUpstream.Received]) {
        let echo = try await EchoUpstream.start()
        do {
            try await withHarness(upstreamURL: echo.url, gatewayLogger: log?.logger, tracingEnvironment: environment) {
                $0.tracingEndpoint = echo.url + "/v1/traces"
                $0.tracingServiceName = "samlgate-test"
                $0.tracingSampleRatio = ratio
                configure(&$0)
            } _: { h in
                try await body(h)
            }
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
        let exports = echo.requests.filter { $0.target == "/v1/traces" }
        for export in exports {
            #expect(export.header("content-type") == ["application/x-protobuf"])
            eachExport(export)
        }
        var spans: [OTLPExport.Span] = []
        var resource: [String: String] = [:]
        for export in exports {
            let decoded = try OTLPExport(export.bytes)
            spans += decoded.spans
            resource.merge(decoded.resourceAttributes) { $1 }
        }
        return (spans, resource, echo.requests.filter { $0.target != "/v1/traces" })
    }

    @Test("an exchange continues the client's trace: the backend's parent is the exported server span, with a span per stage under it")
    func exchange() async throws {
        let (spans, resource, backend) = try await Self.traced { h in
            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let reply = try await h.send(
                .POST, "/api/v1/tokens/authn", body: body,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("traceparent", TraceContextTests.incoming)])
            #expect(reply.status == 200, "\(reply.body)")
        }
        #expect(resource["service.name"] == "samlgate-test")
        let server = try #require(spans.first { $0.name == "POST v1_tokens_authn" }, "\(spans.map(\.name))")
        #expect(server.kind == 2 && server.traceID == Self.traceID && server.parentSpanID == Self.clientParent)
        #expect(server.attributes["samlgate.mvpd"] == GatewayHarness.mvpd && server.attributes["samlgate.outcome"] == "forwarded")
        // An int, as OpenTelemetry's HTTP semantic conventions type it.
        #expect(server.intAttributes["http.response.status_code"] == 200)
        // The backend's parent is the span exported, in the client's trace, sampled (ratio 1).
        let parts = try TraceContextTests.parts(backend.last)
        #expect(parts[1] == Self.traceID && parts[2] == server.spanID && parts[3] == "01", "\(parts)")
        let stages = spans.filter { $0.parentSpanID == server.spanID }
        #expect(Set(stages.map(\.name)) == ["admission", "worker_wait", "verification", "upstream"], "\(stages.map(\.name))")
        for stage in stages {
            #expect(stage.traceID == Self.traceID && stage.kind == 1)
            #expect(stage.start >= server.start && stage.end <= server.end && stage.start <= stage.end, "\(stage.name)")
        }
        #expect(stages.first { $0.name == "verification" }?.attributes["samlgate.verdict"] == "verified")
        #expect(stages.first { $0.name == "upstream" }?.intAttributes["http.response.status_code"] == 200)
        // Whatever span sets it, the status code is an int, never the text of one.
        for span in spans where span.attributes["http.response.status_code"] != nil {
            #expect(span.intAttributes["http.response.status_code"] != nil, "\(span.name): \(span.attributes)")
        }
    }

    @Test("the client's tracestate is the trace state of the server span and of every span under it, as well as forwarded")
    func traceState() async throws {
        // As swift-otel writes a list back (members joined by ", "), so the exported value is this text.
        let state = "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE, tenant@system=1"
        let (spans, _, backend) = try await Self.traced { h in
            let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue())))
            let reply = try await h.send(
                .POST, "/api/v1/tokens/authn", body: body,
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("traceparent", TraceContextTests.incoming), ("tracestate", state),
                ])
            #expect(reply.status == 200, "\(reply.body)")
        }
        #expect(backend.last?.header("tracestate") == [state])
        let server = try #require(spans.first { $0.name == "POST v1_tokens_authn" }, "\(spans.map(\.name))")
        #expect(server.traceID == Self.traceID && server.traceState == state, "\(server.traceState)")
        let stages = spans.filter { $0.parentSpanID == server.spanID }
        #expect(stages.count == 4, "\(stages.map(\.name))")
        for stage in stages { #expect(stage.traceState == state, "\(stage.name): \(stage.traceState)") }
    }

    @Test("a tracestate forwarded but outside the W3C grammar: the client's trace is still continued, its spans without a trace state")
    func traceStateOutsideTheGrammar() async throws {
        let (spans, _, backend) = try await Self.traced { h in
            _ = try await h.send(
                .GET, "/api/v2/REF/configuration", headers: [("traceparent", TraceContextTests.incoming), ("tracestate", "Vendor=abc")])
            // A new trace: a tracestate without a usable traceparent belongs to no trace here.
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("tracestate", "vendor=abc")])
        }
        #expect(backend.first?.header("tracestate") == ["Vendor=abc"])
        let continued = try #require(spans.first { $0.traceID == Self.traceID && $0.kind == 2 }, "\(spans.map(\.traceID))")
        #expect(continued.parentSpanID == Self.clientParent && continued.traceState.isEmpty)
        #expect(backend.last?.header("tracestate").isEmpty == true)
        #expect(spans.allSatisfy { $0.traceState.isEmpty }, "\(spans.map(\.traceState))")
    }

    @Test("sample ratio 1: a trace the gateway starts is sampled and random (03); a continued one keeps the client's random flag")
    func randomFlagSampled() async throws {
        let (spans, _, backend) = try await Self.traced { h in
            _ = try await h.send(.GET, "/api/v2/REF/configuration")
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", "00-\(Self.traceID)-\(Self.clientParent)-03")])
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", "00-\(Self.traceID)-\(Self.clientParent)-00")])
        }
        #expect(backend.count == 3)
        let fresh = try TraceContextTests.parts(backend.first)
        #expect(fresh[1] != Self.traceID && fresh[3] == "03", "\(fresh)")
        #expect(spans.contains { $0.traceID == fresh[1] && $0.spanID == fresh[2] && $0.kind == 2 })
        let random = try TraceContextTests.parts(backend[1])
        #expect(random[1] == Self.traceID && random[3] == "03", "\(random)")
        // Sampled by the gateway (ratio 1), not random: the client's id may be anything.
        let plain = try TraceContextTests.parts(backend[2])
        #expect(plain[1] == Self.traceID && plain[3] == "01", "\(plain)")
    }

    @Test("a refused exchange carries its reason; pass-through gets one span; probes and scrapes none; nothing of the SAML or the device in any span")
    func refusalPassThroughAndPrivacy() async throws {
        let (spans, _, backend) = try await Self.traced { h in
            let forged = try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com"))
            let refused = try await h.exchangeV1(GatewayHarness.base64(forged), device: "device-secret-42")
            #expect(refused.status == 400)
            let pass = try await h.send(.GET, "/api/v1/tokens/authn?requestor=REF&deviceId=device-secret-42")
            #expect(pass.status == 200)
            for path in ["/healthz", "/readyz", "/metrics"] { _ = try await h.send(.GET, path) }
        }
        let refusal = try #require(spans.first { $0.name == "POST v1_tokens_authn" }, "\(spans.map(\.name))")
        #expect(refusal.attributes["samlgate.reason"] == "key_not_trusted" && refusal.attributes["samlgate.outcome"] == "refused")
        #expect(refusal.attributes["samlgate.mvpd"] == GatewayHarness.mvpd && refusal.statusCode == 0)
        #expect(spans.first { $0.parentSpanID == refusal.spanID && $0.name == "verification" }?.attributes["samlgate.verdict"] == "refused")
        #expect(!spans.contains { $0.parentSpanID == refusal.spanID && $0.name == "upstream" })
        // A token check without a body is passed through, and counted and named as such.
        let check = try #require(spans.first { $0.name == "GET proxy" }, "\(spans.map { ($0.name, $0.attributes) })")
        #expect(try TraceContextTests.parts(backend.last)[2] == check.spanID)
        #expect(spans.filter { $0.parentSpanID == check.spanID }.map(\.name) == ["upstream"])
        #expect(!spans.contains { ["GET healthz", "GET readyz", "GET metrics"].contains($0.name) }, "\(spans.map(\.name))")
        let everything = spans.flatMap { [$0.name] + $0.attributes.keys + $0.attributes.values }.joined(separator: " ")
        for secret in ["device-secret-42", "mallory", "SAMLResponse", "Assertion", "requestor=REF"] {
            #expect(!everything.contains(secret), "\(secret) in a span")
        }
    }

    @Test(
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS goes with every export; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the resource"
    )
    func exporterVariables() async throws {
        let environment = [
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Bearer%20t0ken, x-tenant=acme", "OTEL_SERVICE_NAME": "gate-eu",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,service.name=ignored",
        ]
        var exports = 0
        let (spans, resource, _) = try await Self.traced(
            environment: environment,
            eachExport: { export in
                exports += 1
                #expect(export.header("authorization") == ["Bearer t0ken"] && export.header("x-tenant") == ["acme"])
            }
        ) { h in
            _ = try await h.send(.GET, "/api/v2/REF/configuration")
        }
        #expect(exports > 0 && spans.count == 2, "\(spans.map(\.name))")
        #expect(resource["service.name"] == "gate-eu" && resource["deployment.environment"] == "prod", "\(resource)")
    }

    @Test("a full queue drops a request's spans whole and never holds the request; one warning says how many and why")
    func queueFull() async throws {
        let log = CapturedLog()
        // An exchange makes 5 spans: more than the queue holds. A pass-through's 2 fit.
        let environment = ["OTEL_BSP_MAX_QUEUE_SIZE": "3", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "3"]
        let (spans, _, _) = try await Self.traced(environment: environment, log: log) { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 200)
            _ = try await h.send(.GET, "/api/v2/REF/configuration")
        }
        #expect(spans.count == 2 && spans.contains { $0.name == "upstream" }, "\(spans.map(\.name))")
        let warning = try #require(log.lines.first { $0.message == "tracing: spans lost" }, "\(log.lines.map(\.message))")
        #expect(warning.level == .warning && warning.metadata["reason"]?.contains("queue was full (3 spans)") == true)
        #expect(Int(warning.metadata["spans"] ?? "") ?? 0 >= 5, "\(warning.metadata)")
    }

    @Test(
        "a collector answering an error loses that batch, with a warning (endpoint credentials masked); the requests are answered all the same"
    )
    func collectorError() async throws {
        let log = CapturedLog()
        // Exports every 50 ms: one goes out while the reference upstream (the "collector") still runs.
        try await withHarness(gatewayLogger: log.logger, tracingEnvironment: ["OTEL_BSP_SCHEDULE_DELAY": "50"]) {
            // The reference upstream answers 404 here.
            $0.tracingEndpoint =
                $0.upstreams[0].replacingOccurrences(of: "http://", with: "http://tenant:s3cret@") + "/no/collector/v1/traces?api_key=k3y"
            $0.tracingSampleRatio = 1
        } _: { (h: GatewayHarness) async throws in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            #expect(try await h.exchangeV1(saml).status == 204)
            for _ in 0..<100 where !log.lines.contains(where: { $0.message == "tracing: spans lost" }) {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let warning = try #require(log.lines.first { $0.message == "tracing: spans lost" }, "\(log.lines.map(\.message))")
        #expect(warning.metadata["reason"] == "the collector answered 404", "\(warning.metadata)")
        let endpoint = warning.metadata["endpoint"] ?? ""
        #expect(endpoint.hasPrefix("http://***@127.0.0.1:") && endpoint.hasSuffix("/no/collector/v1/traces?***"), "\(endpoint)")
        #expect(!log.lines.contains { "\($0)".contains("s3cret") || "\($0)".contains("k3y") })
    }

    @Test("with a shared replay store: the SET NX round trip is a stage span, recorded or the replay's reason")
    func replayRecord() async throws {
        try await RedisServerProcess.with { redis in
            let (spans, _, _) = try await Self.traced(configure: SharedReplayStoreTests.redisStore(redis.url)) { (h: GatewayHarness) async throws in
                let saml = GatewayHarness.base64(GatewayHarness.issue())
                #expect(try await h.exchangeV1(saml).status == 200)
                #expect(try await h.exchangeV1(saml).status == 400)
            }
            let records = spans.filter { $0.name == "replay_record" }.map { $0.attributes["samlgate.replay"] ?? "" }
            #expect(records.sorted() == ["recorded", "replayed"], "\(spans.map(\.name))")
            let refused = spans.first { $0.name == "POST v1_tokens_authn" && $0.attributes["samlgate.outcome"] == "refused" }
            #expect(refused?.attributes["samlgate.reason"] == "replayed")
        }
    }

    @Test("sample ratio 0: nothing is exported, not even for a client that marks its trace sampled; the trace id is continued, unsampled")
    func sampling() async throws {
        let (spans, _, backend) = try await Self.traced(ratio: 0) { h in
            _ = try await h.send(.GET, "/api/v2/REF/configuration")
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", TraceContextTests.incoming)])
            _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", "00-\(Self.traceID)-\(Self.clientParent)-03")])
        }
        #expect(backend.count == 3)
        // Not sampled; random (W3C Trace Context Level 2): the gateway draws its trace ids whole.
        let fresh = try TraceContextTests.parts(backend.first)
        #expect(fresh[3] == "02" && fresh[1] != Self.traceID)
        let continued = try TraceContextTests.parts(backend[1])
        #expect(continued[1] == Self.traceID && continued[2] != Self.clientParent && continued[3] == "00")
        // The client's random flag stays with its trace id; its sampled flag does not decide.
        let random = try TraceContextTests.parts(backend[2])
        #expect(random[1] == Self.traceID && random[3] == "02")
        #expect(spans.isEmpty, "\(spans.map(\.name))")
    }

    /// Trace ids a client picks to be kept by a sampler that compares the id's own bits with the
    /// ratio (the OpenTelemetry `TraceIdRatioBased` sampler reads the low 64 bits, W3C Trace
    /// Context Level 2 the right-most 56): all zeros there but the last, sampled flag set.
    static func crafted(_ index: Int) -> String {
        let high = String(index + 1, radix: 16)
        let id = String(repeating: "0", count: 16 - high.count) + high + "0000000000000001"
        return "00-\(id)-\(clientParent)-01"
    }

    @Test("sample ratio 0.001: 40 requests with trace ids a client picked to be kept are not all exported (about none)")
    func craftedIDs() async throws {
        let (spans, _, backend) = try await Self.traced(ratio: 0.001) { h in
            for index in 0..<40 {
                _ = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("traceparent", Self.crafted(index))])
            }
        }
        // A recorded request exports its server span and one span per stage: count the requests.
        let recorded = spans.filter { $0.kind == 2 }.count
        // Expected 0.04 recorded; 3 or more would be a 1-in-10,000 event.
        #expect(recorded <= 2, "\(recorded) requests recorded")
        // The client's trace is still continued; sampled only where it was exported.
        #expect(backend.count == 40)
        var sampled = 0
        for (index, request) in backend.enumerated() {
            let parts = try TraceContextTests.parts(request)
            #expect(parts[1] == String(Self.crafted(index).dropFirst(3).prefix(32)) && (parts[3] == "00" || parts[3] == "01"))
            if parts[3] == "01" { sampled += 1 }
        }
        #expect(sampled == recorded)
    }
}

/// The gateway's own sampling decision, on many ids (no server needed to count them).
@Suite("Trace sampling")
struct TraceSamplerTests {
    @Test("crafted ids are kept at the ratio, not always: the decision is keyed by a per-process secret")
    func craftedIDsAtTheRatio() {
        let sampler = TraceSampler(ratio: 0.01)
        let kept = (0..<20_000).filter { sampler.records(continuing: String(TracingTests.crafted($0).dropFirst(3).prefix(32))) }.count
        // 200 expected; 1 % against 100 % is told apart far beyond this margin.
        #expect((120...280).contains(kept), "\(kept) of 20,000 kept")
    }

    @Test("random ids and new traces at ratio 0.5 are kept about half the time; ratios 0 and 1 are never and always")
    func ratios() {
        let half = TraceSampler(ratio: 0.5)
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<10_000).map { _ in String(UInt64.random(in: 0 ... .max, using: &generator), radix: 16) + "0000000000000000" }
        let kept = ids.filter { half.records(continuing: $0) }.count
        #expect((4_600...5_400).contains(kept), "\(kept)")
        let fresh = (0..<10_000).filter { _ in half.recordsNewTrace() }.count
        #expect((4_600...5_400).contains(fresh), "\(fresh)")
        // One trace is decided alike on each of its requests.
        #expect(ids.prefix(100).allSatisfy { half.records(continuing: $0) == half.records(continuing: $0) })
        let never = TraceSampler(ratio: 0)
        let always = TraceSampler(ratio: 1)
        #expect(!ids.contains { never.records(continuing: $0) } && ids.allSatisfy { always.records(continuing: $0) })
        #expect(!never.recordsNewTrace() && always.recordsNewTrace())
    }
}
