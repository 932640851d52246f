import GatewayTestSupport
import Testing

@testable import Gateway

/// A stream's error is that stream's alone: swift-nio-http2 resets it, and the streams beside it
/// on the same connection (answers in flight, exchanges waiting for their bodies) go on. One
/// client's malformed request, or a stream opened just after a graceful shutdown began, must not
/// cost the others their answers.
@Suite("HTTP/2: a stream's error resets that stream only")
struct HTTP2StreamErrorTests {
    typealias Raw = RawHTTP2Connection

    /// Ends the open exchange on `stream` (an empty body) and reads to its answer's end.
    static func finish(_ stream: UInt32, on connection: Raw) async throws -> (answered: Bool, closed: Bool) {
        try await connection.send(Raw.frame(.data, flags: Raw.endStream, stream: stream, []))
        let (frames, closed) = try await connection.frames { $0.stream == stream && $0.endStream }
        return (frames.contains { $0.stream == stream && $0.type == Raw.FrameType.headers.rawValue }, closed)
    }

    @Test(
        "a malformed request resets its stream (PROTOCOL_ERROR): the exchange open beside it is answered, new streams are served",
        arguments: [
            [("connection", "keep-alive")], [("X-Upper-Case", "1")], [("te", "gzip")], [("transfer-encoding", "chunked")],
            [("content-length", "-1")],
        ])
    func malformed(_ headers: [(String, String)]) async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            try await connection.send(Raw.openExchanges(1))
            try await connection.send(Raw.get(3, path: HTTP2AttackTests.passThrough, headers: headers))
            let (reset, closed) = try await connection.frames { $0.type == Raw.FrameType.rstStream.rawValue }
            #expect(!closed && reset.last?.stream == 3 && reset.last?.resetCode == Raw.protocolError, "\(reset.map(\.type))")
            let (answered, closedAfter) = try await Self.finish(1, on: connection)
            #expect(answered && !closedAfter)
            try await connection.send(Raw.get(5, path: HTTP2AttackTests.passThrough))
            let (next, _) = try await connection.frames { $0.stream == 5 && $0.endStream }
            #expect(next.contains { $0.stream == 5 && $0.indexedStatus == 200 })
            #expect(try await h.metric("samlgate_http2_stream_errors_total{reason=\"malformed\"}") == 1)
            #expect(try await HTTP2AttackTests.errors(h, "protocol_error") == 0)
        }
    }

    @Test("malformed requests by the hundred are a flood: the connection ends at the limit, counted")
    func malformedFlood() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            let streams = (0..<300).map { Raw.get(UInt32(2 * $0 + 1), path: HTTP2AttackTests.passThrough, headers: [("connection", "close")]) }
            try? await connection.send(Array(streams.joined()))
            let (frames, closed) = try await connection.framesUntilClose()
            let goAway = frames.first { $0.type == Raw.FrameType.goAway.rawValue }
            #expect(closed && goAway?.goAwayCode == Raw.enhanceYourCalm, "\(String(describing: goAway?.goAwayCode))")
            let resets = frames.filter { $0.type == Raw.FrameType.rstStream.rawValue }.count
            #expect(resets == 200, "\(resets) streams reset before the GOAWAY")
            #expect(try await HTTP2AttackTests.errors(h, "rapid_reset") == 1)
            #expect(try await h.metric("samlgate_http2_stream_errors_total{reason=\"malformed\"}") == 200)
        }
    }

    @Test(
        "in a graceful shutdown, a stream opened after the GOAWAY is refused (REFUSED_STREAM) and the exchange in flight is still answered"
    )
    func refusedAfterGoAway() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.totalTimeout = 30
        }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            try await connection.send(Raw.openExchanges(1))
            try await connection.roundTrip()
            let stopped = Task { await h.gateway.stop() }
            let (goAway, closedEarly) = try await connection.frames { $0.type == Raw.FrameType.goAway.rawValue }
            try #require(!closedEarly && goAway.last?.type == Raw.FrameType.goAway.rawValue, "no GOAWAY")
            // The client has not acknowledged the PING after it: no final GOAWAY yet, and a stream
            // opened now is refused rather than ignored.
            try await connection.send(Raw.get(3, path: HTTP2AttackTests.passThrough))
            let (reset, closed) = try await connection.frames { $0.type == Raw.FrameType.rstStream.rawValue }
            #expect(!closed && reset.last?.stream == 3 && reset.last?.resetCode == Raw.refusedStream)
            let (answered, _) = try await Self.finish(1, on: connection)
            #expect(answered, "the exchange in flight lost its answer")
            await stopped.value
        }
    }
}
