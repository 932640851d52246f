import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

@testable import Gateway

/// HTTP/2 served with prior knowledge (`h2c`) and the known attacks on HTTP/2 servers, each sent
/// frame by frame (``RawHTTP2Connection``): every one ends in a GOAWAY and a closed connection
/// within swift-nio-http2's limits (``HTTP2Limits``), is counted by reason, and leaves the gateway
/// serving. docs/security.md states what each costs the gateway before it is stopped.
@Suite("HTTP/2: h2c and the known attacks")
struct HTTP2AttackTests {
    static let passThrough = "/api/v1/config/REF"

    static func port(_ h: GatewayHarness) -> Int {
        Int(h.gatewayURL.split(separator: ":").last!)!
    }

    static func errors(_ h: GatewayHarness, _ reason: String) async throws -> Double {
        try await h.metric("samlgate_http2_connection_errors_total{reason=\"\(reason)\"}")
    }

    /// The attack ended the way it should: a GOAWAY with `code`, then the connection closed.
    static func expectGoAway(_ connection: RawHTTP2Connection, code: UInt32, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (frames, closed) = try await connection.framesUntilClose()
        let goAway = frames.first { $0.type == RawHTTP2Connection.FrameType.goAway.rawValue }
        #expect(goAway?.goAwayCode == code, "GOAWAY \(String(describing: goAway?.goAwayCode))", sourceLocation: sourceLocation)
        #expect(closed, "the connection stays open after the GOAWAY", sourceLocation: sourceLocation)
    }

    @Test("h2c with prior knowledge: a pass-through and a v1 exchange as two streams of one connection; HTTP/1.1 still served on the port")
    func priorKnowledge() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try RawHTTP2Connection(port: Self.port(h))
            try await connection.send(RawHTTP2Connection.get(1, path: Self.passThrough))
            let body = Array(GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(GatewayHarness.issue()))).utf8)
            let post = RawHTTP2Connection.requestBlock(
                method: "POST", path: "/api/v1/tokens/authn",
                headers: [("content-type", "application/x-www-form-urlencoded"), ("content-length", String(body.count))])
            try await connection.send(
                RawHTTP2Connection.frame(.headers, flags: RawHTTP2Connection.endHeaders, stream: 3, post)
                    + RawHTTP2Connection.frame(.data, flags: RawHTTP2Connection.endStream, stream: 3, body))
            // Both streams to their ends (stream 0's flags are ACKs, not ends).
            var all: [RawHTTP2Connection.Frame] = []
            var ended: Set<UInt32> = []
            while ended.count < 2 {
                let (frames, closed) = try await connection.frames { $0.stream != 0 && $0.endStream }
                all += frames
                if let last = frames.last, last.stream != 0, last.endStream { ended.insert(last.stream) }
                if closed { break }
            }
            var statuses: [UInt32: Int] = [:]
            for frame in all where frame.type == RawHTTP2Connection.FrameType.headers.rawValue { statuses[frame.stream] = frame.indexedStatus }
            #expect(statuses[1] == 200 && statuses[3] == 204, "\(statuses)")
            // The same port still speaks HTTP/1.1.
            #expect(try await h.send(.GET, Self.passThrough).status == 200)
            #expect(try await h.metric("samlgate_client_connections_total{protocol=\"h2c\"}") == 1)
        }
    }

    @Test(
        "rapid reset (CVE-2023-44487): streams opened and reset by the thousand end in ENHANCE_YOUR_CALM at the limit; few reach the backend"
    )
    func rapidReset() async throws {
        let echo = try await EchoUpstream.start()
        do {
            try await withHarness(upstreamURL: echo.url, configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
                let connection = try RawHTTP2Connection(port: Self.port(h))
                var burst: [UInt8] = []
                for index in 0..<1000 {
                    let stream = UInt32(2 * index + 1)
                    burst += RawHTTP2Connection.get(stream, path: Self.passThrough)
                    burst += RawHTTP2Connection.frame(.rstStream, flags: 0, stream: stream, RawHTTP2Connection.bytes(8, count: 4))
                }
                try? await connection.send(burst)
                try await Self.expectGoAway(connection, code: RawHTTP2Connection.enhanceYourCalm)
                #expect(try await Self.errors(h, "rapid_reset") == 1)
                // The gateway serves on.
                #expect(try await h.send(.GET, Self.passThrough).status == 200)
            }
        } catch {
            await echo.stop()
            throw error
        }
        await echo.stop()
        // At most the 200 streams of the limit were opened; each reset drops its trip.
        #expect(echo.requests.count <= 202, "\(echo.requests.count) requests reached the backend")
    }

    @Test("CONTINUATION flood: a header block never ended is cut off after 5 CONTINUATION frames; a header list over 32 KiB is refused")
    func continuationFlood() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try RawHTTP2Connection(port: Self.port(h))
            var flood = RawHTTP2Connection.frame(
                .headers, flags: 0, stream: 1, RawHTTP2Connection.requestBlock(method: "GET", path: Self.passThrough))
            for _ in 0..<1000 {
                flood += RawHTTP2Connection.frame(.continuation, flags: 0, stream: 1, RawHTTP2Connection.literal("x-padding", "a"))
            }
            try? await connection.send(flood)
            try await Self.expectGoAway(connection, code: RawHTTP2Connection.enhanceYourCalm)
            #expect(try await Self.errors(h, "header_flood") == 1)

            let large = try RawHTTP2Connection(port: Self.port(h))
            let block = RawHTTP2Connection.requestBlock(
                method: "GET", path: Self.passThrough, headers: [("x-large", String(repeating: "a", count: 40_000))])
            var frames = RawHTTP2Connection.frame(.headers, flags: 0, stream: 1, Array(block[..<16_000]))
            frames += RawHTTP2Connection.frame(.continuation, flags: 0, stream: 1, Array(block[16_000..<32_000]))
            frames += RawHTTP2Connection.frame(.continuation, flags: RawHTTP2Connection.endHeaders, stream: 1, Array(block[32_000...]))
            try? await large.send(frames)
            let (answer, _) = try await large.framesUntilClose()
            // Refused before the request exists: a GOAWAY, or the stream reset; never an answer.
            #expect(
                answer.contains {
                    $0.type == RawHTTP2Connection.FrameType.goAway.rawValue || $0.type == RawHTTP2Connection.FrameType.rstStream.rawValue
                })
            #expect(!answer.contains { $0.type == RawHTTP2Connection.FrameType.headers.rawValue })
            #expect(try await h.send(.GET, Self.passThrough).status == 200)
        }
    }

    @Test(
        "PING and SETTINGS floods end in GOAWAY ENHANCE_YOUR_CALM after 200 frames in 30 s",
        arguments: [RawHTTP2Connection.FrameType.ping, .settings])
    func controlFlood(_ type: RawHTTP2Connection.FrameType) async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try RawHTTP2Connection(port: Self.port(h))
            let one = type == .ping ? RawHTTP2Connection.ping : RawHTTP2Connection.frame(.settings, flags: 0, stream: 0, [])
            try? await connection.send(RawHTTP2Connection.repeated(one, 1000))
            try await Self.expectGoAway(connection, code: RawHTTP2Connection.enhanceYourCalm)
            #expect(try await Self.errors(h, "control_flood") == 1)
            #expect(try await h.send(.GET, Self.passThrough).status == 200)
        }
    }

    @Test(
        "streams beyond SETTINGS_MAX_CONCURRENT_STREAMS (100) end the connection within the drain's bound; stream ids are spent once, in order"
    )
    func streamLimits() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.totalTimeout = 2
        }) { (h: GatewayHarness) async throws in
            // 101 exchanges whose bodies never come: open streams, each waiting, until the drain's
            // bound (total-timeout + 1 s) closes the connection.
            let connection = try RawHTTP2Connection(port: Self.port(h), readTimeout: 30)
            try? await connection.send(RawHTTP2Connection.openExchanges(HTTP2Limits.maxConcurrentStreams + 1))
            try await Self.expectGoAway(connection, code: RawHTTP2Connection.protocolError)
            #expect(try await Self.errors(h, "stream_limit") == 1)

            // The last stream id there is, answered; a lower one after it is a protocol error.
            let exhausted = try RawHTTP2Connection(port: Self.port(h))
            try await exhausted.send(RawHTTP2Connection.get(0x7FFF_FFFF, path: Self.passThrough))
            let (answer, _) = try await exhausted.frames { $0.stream == 0x7FFF_FFFF && $0.endStream }
            #expect(answer.contains { $0.indexedStatus == 200 })
            try await exhausted.send(RawHTTP2Connection.get(5, path: Self.passThrough))
            try await Self.expectGoAway(exhausted, code: RawHTTP2Connection.protocolError)
            #expect(try await Self.errors(h, "protocol_error") == 1)
            #expect(try await h.send(.GET, Self.passThrough).status == 200)
        }
    }

    @Test("streams open when a flood ends the connection are each ended and counted: none is held after the connection")
    func streamsEndedWithTheConnection() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            // 50 exchanges whose bodies never come, then a PING flood, in one write: the streams are
            // opened in the read that ends the connection.
            let connection = try RawHTTP2Connection(port: Self.port(h))
            try? await connection.send(RawHTTP2Connection.openExchanges(50) + RawHTTP2Connection.repeated(RawHTTP2Connection.ping, 1000))
            try await Self.expectGoAway(connection, code: RawHTTP2Connection.enhanceYourCalm)
            // Each request broken off mid-body, as a closed HTTP/1.1 connection's would be.
            let series = "samlgate_requests_total{route=\"v1_tokens_authn\",status=\"400\"}"
            let counted = try await RemoteMetadataTests.eventually(5) { try await h.metric(series) == 50 }
            let ended = try await h.metric(series)
            #expect(counted, "\(ended) of 50 streams ended")
        }
    }

    @Test("an HTTP/2 connection that opens no stream is closed after idle-timeout")
    func idleConnection() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.idleTimeout = 1
        }) { (h: GatewayHarness) async throws in
            // Closed within the read timeout, not left open for ever.
            let connection = try RawHTTP2Connection(port: Self.port(h), readTimeout: 30)
            let (_, closed) = try await connection.framesUntilClose()
            #expect(closed)
        }
    }

    @Test("a client that half-closes after its requests gets every answer, then the connection is closed")
    func halfClose() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try RawHTTP2Connection(port: Self.port(h), readTimeout: 30)
            try await connection.send(RawHTTP2Connection.get(1, path: Self.passThrough) + RawHTTP2Connection.get(3, path: Self.passThrough))
            connection.shutdownWrite()
            let (frames, closed) = try await connection.framesUntilClose()
            let answered = frames.filter { $0.stream != 0 && $0.type == RawHTTP2Connection.FrameType.headers.rawValue }
            #expect(Set(answered.map(\.stream)) == [1, 3] && answered.allSatisfy { $0.indexedStatus == 200 }, "\(answered.map(\.stream))")
            #expect(closed)
        }
    }

    @Test("a graceful shutdown closes an HTTP/2 connection whose client never acknowledges its PING, total-timeout + 1 s after it began")
    func boundedDrain() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.readTimeout = 2
            $0.totalTimeout = 2
        }) { (h: GatewayHarness) async throws in
            // An exchange whose body never comes keeps a stream open (open on the gateway once the
            // PING sent after it is answered); the client never answers the gateway's PING.
            let connection = try RawHTTP2Connection(port: Self.port(h), readTimeout: 30)
            try await connection.send(RawHTTP2Connection.openExchanges(1))
            try await connection.roundTrip()
            await h.gateway.stop()
            let (_, closed) = try await connection.framesUntilClose()
            #expect(closed, "still open at the read timeout")
        }
    }

    @Test("a zero window never opened: the answer waits in a bounded buffer, the stream is reset after idle-timeout, the connection serves on")
    func zeroWindow() async throws {
        // idle-timeout ends the stream, and then ends the connection once no stream is open: the
        // PING below must reach the gateway within it of the reset, which a loaded machine did
        // not always do in 1 s.
        try await withHarness(configure: {
            $0.h2c = true
            $0.idleTimeout = 5
        }) { (h: GatewayHarness) async throws in
            // SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no DATA may be sent on any stream.
            let connection = try RawHTTP2Connection(port: Self.port(h), settings: [(4, 0)], readTimeout: 30)
            try await connection.send(RawHTTP2Connection.get(1, path: Self.passThrough))
            let (frames, closed) = try await connection.frames { $0.type == RawHTTP2Connection.FrameType.rstStream.rawValue }
            #expect(!closed && frames.contains { $0.indexedStatus == 200 })
            #expect(!frames.contains { $0.type == RawHTTP2Connection.FrameType.data.rawValue && !$0.payload.isEmpty })
            // The connection itself is alive: a PING is answered.
            try await connection.send(RawHTTP2Connection.frame(.ping, flags: 0, stream: 0, [UInt8](repeating: 1, count: 8)))
            let (pong, _) = try await connection.frames { $0.type == RawHTTP2Connection.FrameType.ping.rawValue }
            #expect(pong.last?.type == RawHTTP2Connection.FrameType.ping.rawValue && pong.last?.flags == 1)
        }
    }
}
