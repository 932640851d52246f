import CLITestSupport
import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Only a connection that cannot be made counts against an upstream's health (`/readyz`, the
/// cool-down): what an answer to one request looks like, or how it breaks, may be that request's
/// doing. And a timeout is blamed on whom the gateway was waiting for: a client that uploads or
/// reads too slowly is a client timeout, not an upstream one.
@Suite("Upstream blame")
struct UpstreamBlameTests {
    /// A reflected value that keeps the request head just under the gateway's 80 KiB limit.
    static let nearLimit = 80 * 1024 - 200

    static func port(_ h: GatewayHarness) -> Int { Int(h.gatewayURL.split(separator: ":").last!)! }

    /// `GET /reflect` on a connection of its own; the upstream puts `value` into its answer head `copies` times.
    static func reflect(_ h: GatewayHarness, length: Int, copies: Int, ownLength: Int = 0) async throws -> RawHTTP.Answer? {
        let connection = try RawConnection(port: port(h), readTimeout: Int(TestTiming.seconds(10)))
        let value = String(repeating: "r", count: length)
        try await connection.write(
            "GET /reflect HTTP/1.1\r\nHost: h\r\nX-Copies: \(copies)\r\nX-Own-Length: \(ownLength)\r\nX-Reflect: \(value)\r\n\r\n")
        return try await connection.readAnswer()
    }

    static func ready(_ h: GatewayHarness) async throws -> Bool {
        let reply = try await h.send(.GET, "/readyz")
        return reply.status == 200 && reply.json?["upstreamsHealthy"] as? Int == 1
    }

    @Test(
        "a request head the upstream reflects past the answer-head limit: 502 upstream_response_invalid each time, /readyz stays 200, other requests pass"
    )
    func reflectedPastLimit() async throws {
        let upstream = try await ScriptedUpstream.start()
        // Stopped also when the test fails.
        defer { Task { await upstream.stop() } }
        try await withHarness(upstreamURL: upstream.url) { h in
            for _ in 0..<4 {
                let answer = try #require(try await Self.reflect(h, length: Self.nearLimit, copies: 2))
                #expect(answer.status == 502)
                #expect(answer.reason == "upstream_response_invalid")
                #expect(!answer.head.contains("rrrr"))
                #expect(try await Self.ready(h), "one client's request took the upstream out of rotation")
            }
            let plain = try await h.send(.GET, "/anything")
            #expect(plain.status == 200 && plain.body == "plain")
            let invalid = "samlgate_upstream_errors_total{upstream=\"\(upstream.url)\",kind=\"invalid_response\"}"
            #expect(try await h.metric(invalid) == 4)
            #expect(try await h.metric("samlgate_errors_total{code=\"upstream_response_invalid\"}") == 4)
        }
    }

    @Test("an upstream reflecting a request head at the gateway's limit once, with headers of its own: relayed whole")
    func reflectedOnceWithinHeadroom() async throws {
        let upstream = try await ScriptedUpstream.start()
        // Stopped also when the test fails.
        defer { Task { await upstream.stop() } }
        try await withHarness(upstreamURL: upstream.url) { h in
            // Over the 80 KiB a request head may have, under the answer-head limit.
            let answer = try #require(try await Self.reflect(h, length: Self.nearLimit, copies: 1, ownLength: 16 * 1024))
            #expect(answer.status == 200)
            #expect(answer.body == "ok")
            #expect(answer.head.contains("X-Echo-0: " + String(repeating: "r", count: Self.nearLimit) + "\r\n"))
            #expect(try await Self.ready(h))
        }
    }

    @Test(
        "an answer that is not HTTP/1.1: 502 upstream_response_invalid, readiness untouched",
        arguments: [
            "HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok",
            "SSH-2.0-OpenSSH_9.2\r\n\u{0}\u{1}\u{2}garbage",
            "HTTP/1.1 200 OK\r\nContent-Length: two\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nX Bad Name: 1\r\nContent-Length: 2\r\n\r\nok",
        ])
    func malformedAnswer(answer: String) async throws {
        let garbage = try await FaultyUpstream.startAnswering(Array(answer.utf8))
        try await withHarness(upstreamURL: garbage.url) { h in
            for _ in 0..<3 {
                ErrorCodeTests.expectError(try await h.send(.GET, "/api/v1/config/REF"), 502, "upstream_response_invalid", .networkReceivedError)
                #expect(try await Self.ready(h))
            }
            ErrorCodeTests.expectError(try await UpstreamFailureTests.exchange(h), 502, "upstream_response_invalid", .networkReceivedError)
            #expect(try await Self.ready(h))
        }
        await garbage.stop()
    }

    @Test("an upstream that drops the connection on a request: 502 upstream_unavailable, readiness untouched (a request can provoke it)")
    func resetKeepsReadiness() async throws {
        let resetting = try await FaultyUpstream.startResetting()
        try await withHarness(upstreamURL: resetting.url) { h in
            for _ in 0..<3 {
                ErrorCodeTests.expectError(try await h.send(.GET, "/api/v1/config/REF"), 502, "upstream_unavailable", .networkConnectionTimeout)
                #expect(try await Self.ready(h))
            }
        }
        await resetting.stop()
    }

    @Test(
        "a client that does not read a large answer past total-timeout: its connection is closed, counted as client_timeout, not as an upstream timeout"
    )
    func slowReader() async throws {
        let upstream = try await ScriptedUpstream.start()
        // Stopped also when the test fails.
        defer { Task { await upstream.stop() } }
        try await withHarness(
            upstreamURL: upstream.url,
            configure: {
                $0.readTimeout = 1
                $0.totalTimeout = 2
            }
        ) { h in
            let connection = try RawConnection(port: Self.port(h), readTimeout: Int(TestTiming.seconds(30)))
            try await connection.write("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
            // Never read until the gateway gives up on it.
            let counted = try await RemoteMetadataTests.eventually(20) {
                try await h.metric("samlgate_errors_total{code=\"client_timeout\"}") == 1
            }
            #expect(counted)
            #expect(try await connection.closedByServer())
            let timeouts = "samlgate_upstream_errors_total{upstream=\"\(upstream.url)\",kind=\"timeout\"}"
            #expect(try await h.metric(timeouts) == 0)
            #expect(try await h.metric("samlgate_errors_total{code=\"upstream_timeout\"}") == 0)
            #expect(try await Self.ready(h))
        }
    }
}
