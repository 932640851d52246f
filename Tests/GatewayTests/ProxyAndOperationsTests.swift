import Dispatch
import Foundation
import Gateway
import GatewayTestSupport
import Testing

@Suite("Pass-through and operations")
struct ProxyAndOperationsTests {
    @Test("any other path is forwarded byte-exact: method, path, query, body; hop-by-hop dropped; X-Forwarded-* and X-Request-Id added")
    func passThrough() async throws {
        try await withHarness { h in
            var body: [UInt8] = Array(0...255)
            body += Array("SAMLResponse=%2B%2F &x=\u{0}".utf8)
            let reply = try await h.send(
                .PUT, "/reference/echo/a%20b/c?q=1&r=%2F%3D&q=2", bytes: body,
                headers: [
                    ("Content-Type", "application/octet-stream"), ("X-Custom", "kept"), ("Keep-Alive", "timeout=5"),
                    ("X-Request-Id", "req-42"), ("Connection", "X-Drop-Me"), ("X-Drop-Me", "1"),
                ])
            #expect(reply.status == 200)
            #expect(reply.raw == body)
            #expect(reply.headers.first(name: "X-Echo-Method") == "PUT")
            #expect(reply.headers.first(name: "X-Echo-URI") == "/reference/echo/a%20b/c?q=1&r=%2F%3D&q=2")
            #expect(reply.headers.first(name: "X-Request-Id") == "req-42")
            let seen = try #require(reply.headers.first(name: "X-Echo-Headers"))
            let headers = try #require(try JSONSerialization.jsonObject(with: Data(seen.utf8)) as? [String: String])
            #expect(headers["x-custom"] == "kept")
            #expect(headers["x-forwarded-for"] == "127.0.0.1")
            #expect(headers["x-forwarded-proto"] == "http")
            #expect(headers["x-request-id"] == "req-42")
            #expect(headers["keep-alive"] == nil)
            #expect(headers["x-drop-me"] == nil)
        }
    }

    @Test("pass-through body is byte-exact for a large binary body")
    func passThroughLarge() async throws {
        try await withHarness { h in
            var generator = SystemRandomNumberGenerator()
            let body = (0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var request = HTTPClientRequestBuilder.post(h.gatewayURL + "/reference/echo/blob", body: body)
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            let response = try await GatewayHarness.client.execute(request, timeout: .seconds(30))
            let echoed = try await response.body.collect(upTo: 8 << 20)
            #expect(response.status.code == 200)
            #expect(Array(buffer: echoed) == body)
        }
    }

    @Test("healthz, readyz and metrics answer locally")
    func operations() async throws {
        try await withHarness { h in
            let health = try await h.send(.GET, "/healthz")
            #expect(health.status == 200 && health.json?["status"] as? String == "up")
            let ready = try await h.send(.GET, "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json?["mvpds"] as? Int == 1)
            _ = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
            let metrics = try await h.send(.GET, "/metrics")
            #expect(metrics.headers.first(name: "Content-Type")?.hasPrefix("text/plain") == true)
            for name in [
                "samlgate_requests_total{route=\"v1_tokens_authn\",status=\"204\"} 1", "samlgate_stage_duration_seconds_bucket",
                "samlgate_worker_queue_depth", "samlgate_upstream_duration_seconds", "samlgate_saml_forms_total{form=\"base64\"} 1",
                "samlgate_exchanges_total{mvpd=\"\(GatewayHarness.mvpd)\",outcome=\"forwarded\"} 1",
                "samlgate_upstreams_configured 1", "samlgate_upstreams_healthy 1", "samlgate_workers ", "samlgate_worker_queue_limit ",
            ] {
                #expect(metrics.body.contains(name), "metrics lack \(name)")
            }
            // Without a shared replay store there is no such series for an alert to read as down.
            #expect(!metrics.body.contains("samlgate_replay_store_up"))
        }
    }

    @Test("every request is counted under its route's name, refusals before routing included")
    func routeLabels() async throws {
        try await EchoUpstream.withGateway { h, _, port in
            _ = try await h.send(.GET, "/healthz")
            _ = try await h.send(.GET, "/readyz")
            _ = try await h.send(.GET, "/some/page")
            _ = try await h.send(.GET, "/api/v1/tokens/authn?requestor=REF&deviceId=d")
            _ = try await h.send(.PUT, "/api/v1/tokens/authn", body: "x")
            _ = try await h.send(.GET, "/api/v2/REF/profiles")
            _ = try await h.send(.POST, "/api/v2/REF/profiles/sso/apple", body: "")
            _ = try await h.exchangeV1("not saml")
            for raw in [
                "GET /a/%2e%2e/b HTTP/1.1\r\nHost: h\r\n\r\n",
                "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
                "GET /api/v1/tokens/authn HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx",
            ] {
                let connection = try RawConnection(port: port)
                try await connection.write(raw)
                _ = try await connection.readAnswer()
            }
            let metrics = try await h.send(.GET, "/metrics").body
            for route in [
                "healthz", "readyz", "proxy", "exchange_method", "v2_profiles", "v2_profiles_sso", "v1_tokens_authn", "invalid_target",
                "invalid_request", "v1_token_check",
            ] {
                #expect(metrics.contains("samlgate_requests_total{route=\"\(route)\","), "no requests counted for \(route)")
            }
        }
    }

    @Test("a full worker queue answers 503 overloaded with Retry-After at once")
    func overloaded() async throws {
        try await withHarness(configure: {
            $0.workers = 1
            $0.queue = 1
        }) { h in
            // Occupy the only worker and the only queue slot.
            let gate = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                #expect(h.gateway.core.pool.enqueue { gate.wait() } == nil)
            }
            // The worker stays blocked until the gate opens below, so any answer now proves the
            // request was refused rather than queued (no timing assertion: CI machines are busy).
            let body = GatewayHarness.base64(GatewayHarness.issue())
            let reply = try await h.exchangeV1(body)
            ErrorCodeTests.expectError(reply, 503, "overloaded", .maximumExecutionTimeExceeded)
            #expect(reply.headers.first(name: "Retry-After") == "1")
            gate.signal()
            gate.signal()
            // Served again once the workers are free.
            var status = 0
            for _ in 0..<50 where status != 204 {
                status = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue())).status
                if status != 204 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(status == 204)
        }
    }
}
