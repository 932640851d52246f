import AsyncHTTPClient
import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import Testing

/// An upstream that is down, slow, resets or fails gives the documented answer, and the gateway
/// keeps serving.
@Suite("Upstream failures")
struct UpstreamFailureTests {
    static func exchange(_ h: GatewayHarness) async throws -> GatewayHarness.Reply {
        try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()))
    }

    @Test("upstream down: 502 upstream_unavailable, quickly; readiness turns false")
    func down() async throws {
        // The cool-down far longer than any run of this test: readiness is asserted by state, not
        // by how soon after the failure `/readyz` is asked (a loaded CI machine took over 5 s).
        try await withHarness(
            upstreamURL: "http://127.0.0.1:1",
            configure: {
                $0.connectTimeout = 1
                $0.upstreamCooldown = 3600
            }
        ) { h in
            ErrorCodeTests.expectError(try await Self.exchange(h), 502, "upstream_unavailable", .networkConnectionTimeout)
            // One connect attempt, no back-off retries (checked by count, not by the clock).
            let metrics = try await h.send(.GET, "/metrics")
            let connectErrors = metrics.body.split(separator: "\n").filter {
                $0.hasPrefix("samlgate_upstream_errors_total{") && $0.contains("kind=\"connect\"")
            }
            #expect(connectErrors.count == 1 && connectErrors.first?.hasSuffix(" 1") == true, "\(connectErrors)")
            let ready = try await h.send(.GET, "/readyz")
            #expect(ready.status == 503)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
    }

    @Test("upstream slower than the read timeout: 504 upstream_timeout")
    func slow() async throws {
        let slow = try await FaultyUpstream.start(.slow(.seconds(4)))
        try await withHarness(
            upstreamURL: slow.url,
            configure: {
                $0.readTimeout = 0.5
                $0.totalTimeout = 1
            }
        ) { h in
            ErrorCodeTests.expectError(try await Self.exchange(h), 504, "upstream_timeout", .maximumExecutionTimeExceeded)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        await slow.stop()
    }

    @Test("an upstream that switches protocols unasked: 502, and its connection never carries another request")
    func switchingProtocols() async throws {
        let switching = try await FaultyUpstream.startSwitching()
        try await withHarness(
            upstreamURL: switching.url,
            configure: {
                $0.readTimeout = 5
                $0.totalTimeout = 10
            }
        ) { h in
            // Twice: the second request must get a connection of its own, not the upgraded one
            // (which would leave it waiting for the read timeout: 504).
            for _ in 0..<2 {
                let reply = try await h.send(.GET, "/ws")
                ErrorCodeTests.expectError(reply, 502, "upstream_response_invalid", .networkReceivedError)
            }
            #expect(try await h.send(.GET, "/readyz").status == 200, "one client's request took the upstream out of rotation")
        }
        await switching.stop()
    }

    @Test("upstream closing the connection: 502 upstream_unavailable, no retry of the exchange")
    func reset() async throws {
        let resetting = try await FaultyUpstream.startResetting()
        try await withHarness(upstreamURL: resetting.url) { h in
            ErrorCodeTests.expectError(try await Self.exchange(h), 502, "upstream_unavailable", .networkConnectionTimeout)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        // With a healthy second upstream, the exchange that may have reached the first one is
        // still not sent again (the first request of a fresh gateway goes to the first upstream).
        try await withHarness(configure: { configuration in
            configuration.upstreams = [resetting.url] + configuration.upstreams
        }) { h in
            ErrorCodeTests.expectError(try await Self.exchange(h), 502, "upstream_unavailable", .networkConnectionTimeout)
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
        await resetting.stop()
    }

    @Test(
        "upstream answering before it has read a streamed body: its answer is passed back, the gateway keeps serving",
        arguments: [true, false])
    func answerBeforeBody(emptyAnswer: Bool) async throws {
        let early = try await FaultyUpstream.start(.answerBeforeBody(emptyAnswer: emptyAnswer))
        try await withHarness(upstreamURL: early.url) { h in
            for round in 0..<3 {
                // Sent in two halves with a pause, so the upstream's answer is written to the client
                // while the gateway is still waiting for the second half to forward it (a second
                // reader on the connection's stream used to crash the process here).
                let (chunks, continuation) = AsyncStream<ByteBuffer>.makeStream()
                let sender = Task {
                    continuation.yield(ByteBuffer(repeating: UInt8(ascii: "a"), count: 64 << 10))
                    try? await Task.sleep(for: .milliseconds(300))
                    continuation.yield(ByteBuffer(repeating: UInt8(ascii: "b"), count: 64 << 10))
                    continuation.finish()
                }
                var request = HTTPClientRequest(url: h.gatewayURL + "/upload/\(round)")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/octet-stream")
                request.body = .stream(chunks, length: .known(Int64(128 << 10)))
                let response = try await GatewayHarness.client.execute(request, timeout: .milliseconds(Int64(TestTiming.seconds(10) * 1000)))
                let body = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code == 413)
                #expect(String(buffer: body) == (emptyAnswer ? "" : "{\"upstream\":\"too large\"}"))
                await sender.value
            }
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        await early.stop()
    }

    @Test(
        "upstream answering before the body's end has arrived: the connection stays usable, the next request on it is answered",
        arguments: [
            ("Content-Length: 10\r\n\r\nhello", "world"),
            ("Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "5\r\nworld\r\n0\r\n\r\n"),
        ])
    func answerBeforeBodyEndKeepsConnection(firstHalf: String, secondHalf: String) async throws {
        let early = try await FaultyUpstream.start(.answerBeforeBody(emptyAnswer: false))
        try await withHarness(upstreamURL: early.url) { h in
            let port = try #require(URLComponents(string: h.gatewayURL)?.port)
            let connection = try RawConnection(port: port, readTimeout: Int(TestTiming.seconds(10)))
            // Half the body; the whole answer arrives before the other half is sent (a client that
            // wrote its whole body before reading keeps the connection the same way).
            try await connection.write("POST /upload HTTP/1.1\r\nHost: h\r\n" + firstHalf)
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 413)
            try await connection.write(secondHalf)
            // Was: the request never completed once its body ended after the answer, and this one
            // waited behind it for ever.
            try await connection.write("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n")
            let next = try #require(try await connection.readAnswer())
            #expect(next.status == 200)
        }
        await early.stop()
    }

    @Test("upstream 500: passed back unchanged")
    func serverError() async throws {
        let failing = try await FaultyUpstream.start(.status500)
        try await withHarness(upstreamURL: failing.url) { h in
            let reply = try await Self.exchange(h)
            #expect(reply.status == 500)
            #expect(reply.body == "{\"upstream\":\"broken\"}")
        }
        await failing.stop()
    }

    @Test("two upstreams, one down: the exchange is retried on the healthy one (the connection was never made)")
    func failover() async throws {
        try await withHarness(configure: { configuration in
            configuration.upstreams = ["http://127.0.0.1:1"] + configuration.upstreams
        }) { h in
            for _ in 0..<3 {
                #expect(try await Self.exchange(h).status == 204)
            }
            #expect(h.upstream?.store.exchanges.count == 3)
            let metrics = try await h.send(.GET, "/metrics")
            #expect(
                (MetricSeriesTests.samples(metrics.body)["samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:1\",kind=\"connect\"}"] ?? 0) > 0
            )
        }
    }
}
