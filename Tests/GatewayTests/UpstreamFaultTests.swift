import Foundation
import Gateway
import GatewayTestSupport
import NIOCore
import ReferenceUpstream
import Testing

/// Backends that fail in the ways real ones do, through real sockets: garbage instead of HTTP,
/// a header larger than any backend sends, an answer broken off in the middle, and a backend
/// killed and started again. The gateway answers with a code, keeps serving, and recovers
/// without a restart.
@Suite("Upstream faults")
struct UpstreamFaultTests {
    @Test(
        "an upstream that answers bytes that are not HTTP: 502 upstream_response_invalid, pass-through and exchange alike; the gateway keeps serving"
    )
    func garbage() async throws {
        let garbage = try await FaultyUpstream.startAnswering(Array("SSH-2.0-OpenSSH_9.2\r\n\u{0}\u{1}\u{2}garbage".utf8))
        try await withHarness(upstreamURL: garbage.url) { h in
            ErrorCodeTests.expectError(try await h.send(.GET, "/api/v1/config/REF"), 502, "upstream_response_invalid", .networkReceivedError)
            ErrorCodeTests.expectError(try await UpstreamFailureTests.exchange(h), 502, "upstream_response_invalid", .networkReceivedError)
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        await garbage.stop()
    }

    @Test("an upstream answer whose header is larger than any backend sends (256 KiB): 502, nothing of it reaches the client")
    func oversizedHeader() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Big: " + String(repeating: "a", count: 256 << 10) + "\r\n\r\nok"
        let big = try await FaultyUpstream.startAnswering(Array(head.utf8))
        try await withHarness(upstreamURL: big.url) { h in
            let reply = try await h.send(.GET, "/api/v1/config/REF")
            ErrorCodeTests.expectError(reply, 502, "upstream_response_invalid", .networkReceivedError)
            #expect(!reply.headers.contains(name: "X-Big"))
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        await big.stop()
    }

    @Test(
        "an upstream that breaks off in the middle of its answer: the client's connection is closed after what arrived (it cannot be told otherwise), the next request is served"
    )
    func brokenOffMidAnswer() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
        let partial = try await FaultyUpstream.startAnswering(Array(head.utf8) + [UInt8](repeating: 0x41, count: 1000))
        try await withHarness(upstreamURL: partial.url) { h in
            let port = try #require(Int(h.gatewayURL.split(separator: ":").last ?? ""))
            let connection = try RawConnection(port: port, readTimeout: 10)
            try await connection.write("GET /download HTTP/1.1\r\nHost: h\r\n\r\n")
            // Never a complete answer of 100,000 bytes: the connection ends after the part sent.
            #expect(try await connection.readAnswer() == nil)
            let metrics = try await h.send(.GET, "/metrics").body
            #expect(
                (MetricSeriesTests.samples(metrics)["samlgate_upstream_errors_total{upstream=\"\(partial.url)\",kind=\"broken\"}"] ?? 0) > 0,
                "\(metrics)")
            #expect(try await h.send(.GET, "/healthz").status == 200)
        }
        await partial.stop()
    }

    @Test(
        "an upstream killed and started again on its port: 502 upstream_unavailable meanwhile, served again once it is back (within the cool-down), no restart"
    )
    func killedAndRestarted() async throws {
        let probe = ReferenceUpstreamServer(
            host: "127.0.0.1", port: 0, configuration: GatewayHarness.upstreamConfiguration,
            logger: .init(label: "probe"), signals: false)
        let probeTask = Task { try await probe.run() }
        let port = await probe.port.value()
        try await withHarness(upstreamURL: "http://127.0.0.1:\(port)", configure: { $0.upstreamCooldown = 0.5 }) { h in
            #expect(try await h.send(.GET, "/api/v1/config/REF").status == 200)
            #expect(try await UpstreamFailureTests.exchange(h).status == 204)
            await probe.stop()
            _ = try? await probeTask.value
            ErrorCodeTests.expectError(try await h.send(.GET, "/api/v1/config/REF"), 502, "upstream_unavailable", .networkConnectionTimeout)
            ErrorCodeTests.expectError(try await UpstreamFailureTests.exchange(h), 502, "upstream_unavailable", .networkConnectionTimeout)

            let again = ReferenceUpstreamServer(
                host: "127.0.0.1", port: port, configuration: GatewayHarness.upstreamConfiguration,
                logger: .init(label: "again"), signals: false)
            let againTask = Task { try await again.run() }
            _ = await again.port.value()
            let back = try await RemoteMetadataTests.eventually(5) { try await h.send(.GET, "/api/v1/config/REF").status == 200 }
            #expect(back, "the gateway uses the upstream again once it is back")
            #expect(try await UpstreamFailureTests.exchange(h).status == 204)
            await again.stop()
            _ = try? await againTask.value
        }
    }
}
