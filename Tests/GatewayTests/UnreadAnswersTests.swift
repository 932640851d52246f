import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

/// A client that pipelines requests and never reads the answers must not make the gateway pile
/// its answers up in memory: a few bytes of `GET /metrics` buy kilobytes of answer each.
@Suite("Pipelined requests whose answers are not read", .serialized)
struct UnreadAnswersTests {
    @Test(
        "pipelined GET /metrics never read: the gateway answers only what the connection holds, then stops reading; once the client reads, every answer follows, in order"
    )
    func unreadAnswers() async throws {
        try await withHarness { harness in
            let port = try #require(Int(harness.gatewayURL.split(separator: ":").last ?? ""))
            let metrics = try await harness.send(.GET, "/metrics")
            #expect(metrics.status == 200)
            let connection = try RawConnection(port: port)
            // 20,000 requests (about 0.7 MB, which the kernel's buffers take whether or not the
            // gateway reads) ask for more answers (some 20,000 × the exposition) than the
            // kernel's buffers on both sides hold.
            let count = 20_000
            try await connection.write((0..<count).map { "GET /metrics HTTP/1.1\r\nHost: h\r\nX-Request-Id: u\($0)\r\n\r\n" }.joined())
            try await Task.sleep(for: .seconds(TestTiming.seconds(1)))
            let before = try await Self.answered(harness)
            try await Task.sleep(for: .seconds(TestTiming.seconds(0.5)))
            let after = try await Self.answered(harness)
            #expect(after - before <= 2, "answers kept coming while none was read: \(before) → \(after)")
            #expect(after < Double(count) / 2, "answered \(after) of \(count) unread requests (exposition \(metrics.raw.count) bytes)")

            var ids: [String] = []
            while ids.count < count, let answer = try await connection.readAnswer() {
                guard answer.status == 200 else { break }
                ids.append(HTTPProtocolTests.header("x-request-id", in: answer) ?? "?")
            }
            #expect(ids.count == count)
            #expect(zip(ids, (0..<count).map { "u\($0)" }).first { $0 != $1 } == nil, "in order")
        }
    }

    /// `samlgate_requests_total{route="metrics",status="200"}`, asked on a connection of its own.
    static func answered(_ harness: GatewayHarness) async throws -> Double {
        let body = try await harness.send(.GET, "/metrics").body
        let prefix = "samlgate_requests_total{route=\"metrics\",status=\"200\"} "
        guard let line = body.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Double(line.dropFirst(prefix.count)) ?? 0
    }
}
