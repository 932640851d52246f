import CLITestSupport
import Foundation
import GatewayTestSupport
import Testing

@testable import Gateway

/// What one client can make the gateway hold at the HTTP/2 edge, each bound tried past its limit
/// through raw frames: backend connections (streams per client), answers it does not read (the
/// connection's answer budget), streams beyond the concurrency limit (the others still
/// answered), uploads it abandons (their backend connections dropped at once), a connection it
/// leaves idle (told with a GOAWAY); and the probe listener, answered when clients fill theirs.
/// Every close is proved within a read timeout far from the gateway's own clocks, never timed.
@Suite("HTTP/2: what one client can hold, bounded")
struct HTTP2EdgeBoundsTests {
    typealias Raw = RawHTTP2Connection

    @Test("a client's streams beyond max-streams-per-client are refused (REFUSED_STREAM), over all its connections; a stream closed frees its place")
    func streamsPerClient() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.maxStreamsPerClient = 3
        }) { (h: GatewayHarness) async throws in
            let port = HTTP2AttackTests.port(h)
            let first = try Raw(port: port, readTimeout: 30)
            try await first.send(Raw.openExchanges(2))
            try await first.roundTrip()
            let second = try Raw(port: port, readTimeout: 30)
            try await second.send(Raw.openExchanges(2))
            let (frames, closed) = try await second.frames { $0.type == Raw.FrameType.rstStream.rawValue }
            #expect(!closed && frames.last?.stream == 3 && frames.last?.resetCode == Raw.refusedStream, "\(frames.map(\.type))")
            #expect(try await h.metric("samlgate_http2_stream_errors_total{reason=\"client_limit\"}") == 1)
            // The first connection's exchange answered: its place goes to a new stream.
            let (answered, _) = try await HTTP2StreamErrorTests.finish(1, on: first)
            #expect(answered)
            try await second.send(Raw.get(5, path: HTTP2AttackTests.passThrough))
            let (next, _) = try await second.frames { $0.stream == 5 && ($0.endStream || $0.type == Raw.FrameType.rstStream.rawValue) }
            #expect(next.contains { $0.stream == 5 && $0.indexedStatus == 200 }, "\(next.map(\.type))")
        }
    }

    @Test("a stream beyond SETTINGS_MAX_CONCURRENT_STREAMS ends the connection gracefully: the exchanges already taken are answered")
    func streamLimitDrains() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.totalTimeout = 60
        }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            try await connection.send(Raw.settingsAck + Raw.openExchanges(HTTP2Limits.maxConcurrentStreams))
            try await connection.roundTrip()
            try await connection.send(Raw.get(UInt32(2 * HTTP2Limits.maxConcurrentStreams + 1), path: HTTP2AttackTests.passThrough))
            let (goAway, closedEarly) = try await connection.frames { $0.type == Raw.FrameType.goAway.rawValue }
            #expect(!closedEarly && goAway.last?.goAwayCode == Raw.protocolError)
            let (answered, _) = try await HTTP2StreamErrorTests.finish(1, on: connection)
            #expect(answered, "an exchange taken before the 101st stream lost its answer")
            #expect(try await HTTP2AttackTests.errors(h, "stream_limit") == 1)
        }
    }

    /// Polls `condition` until it holds (at most `seconds`): far from the gateway's own clocks
    /// (`total-timeout`, `idle-timeout` at 300 s), so only the event under test can make it hold.
    static func eventually(within seconds: Int = 30, _ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<(seconds * 20) {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test(
        "uploads a client abandons release their backend connections at once, however it abandons them",
        arguments: ["half-close", "close", "protocol error", "reset streams"])
    func abandonedUploads(_ how: String) async throws {
        try await ScriptedUpstream.withGateway(configure: {
            $0.h2c = true
            $0.totalTimeout = 300
            $0.idleTimeout = 300
        }) { h, open in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 60)
            let post = Raw.requestBlock(method: "POST", path: "/upload", headers: [("content-length", "100")])
            let streams = Array(stride(from: UInt32(1), through: 39, by: 2))
            var frames: [UInt8] = []
            for stream in streams {
                frames += Raw.frame(.headers, flags: Raw.endHeaders, stream: stream, post)
                frames += Raw.frame(.data, flags: 0, stream: stream, [UInt8](repeating: 0x61, count: 50))
            }
            try await connection.send(frames)
            // Every upload reached the backend (a connection opened and given up on the way, say a
            // retried connect, would not make the count lower).
            #expect(try await Self.eventually { open.count.load(ordering: .relaxed) >= streams.count }, "uploads never reached the backend")
            switch how {
            case "half-close":
                connection.shutdownWrite()
            case "close":
                connection.shutdownBoth()
            case "protocol error":
                // WINDOW_UPDATE of 0 on the connection: a connection error.
                try await connection.send(Raw.frame(.windowUpdate, flags: 0, stream: 0, [0, 0, 0, 0]))
            default:
                try await connection.send(streams.flatMap { Raw.frame(.rstStream, flags: 0, stream: $0, [0, 0, 0, 8]) })
            }
            let released = try await Self.eventually { open.count.load(ordering: .relaxed) == 0 }
            #expect(released, "\(how): \(open.count.load(ordering: .relaxed)) backend connections still open")
        }
    }

    @Test("an idle connection is told with a GOAWAY (NO_ERROR, the last stream taken) before it closes")
    func idleGoAway() async throws {
        try await withHarness(configure: {
            $0.h2c = true
            $0.idleTimeout = 1
        }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 60)
            try await connection.send(Raw.get(1, path: HTTP2AttackTests.passThrough))
            let (frames, closed) = try await connection.framesUntilClose()
            let goAway = frames.first { $0.type == Raw.FrameType.goAway.rawValue }
            #expect(closed && goAway?.goAwayCode == 0 && goAway?.goAwayLastStream == 1, "\(frames.map(\.type))")
        }
    }

    @Test("answers a client never reads hold the connection's budget, then the connection is closed (GOAWAY ENHANCE_YOUR_CALM, unread_answers)")
    func unreadAnswers() async throws {
        try await ScriptedUpstream.withGateway(configure: {
            $0.h2c = true
            $0.totalTimeout = 2
            $0.idleTimeout = 300
            $0.http2AnswerBudget = 16_384
        }) { h, _ in
            // SETTINGS_INITIAL_WINDOW_SIZE 0: not one byte of an answer may be sent. Answers of
            // one read each: their trips end, and what they wrote stays held.
            let connection = try Raw(port: HTTP2AttackTests.port(h), settings: [(4, 0)], readTimeout: 60)
            var frames: [UInt8] = Raw.settingsAck
            for stream in stride(from: UInt32(1), through: 19, by: 2) { frames += Raw.get(stream, path: "/small") }
            try await connection.send(frames)
            let (read, closed) = try await connection.framesUntilClose()
            let goAway = read.first { $0.type == Raw.FrameType.goAway.rawValue }
            #expect(closed && goAway?.goAwayCode == Raw.enhanceYourCalm, "\(read.map(\.type))")
            #expect(try await HTTP2AttackTests.errors(h, "unread_answers") == 1)
        }
    }

    @Test("plain-port counts its own connections: probes and scrapes are answered while the client listener is full")
    func probesApart() async throws {
        try await TLSListenerTests.withTLS({ configuration, _ in configuration.maxConnections = 3 }) { h, _ in
            let port = TLSListenerTests.port(h)
            let silent = try (0..<6).map { _ in try RawConnection(port: port, readTimeout: 30) }
            var refused = 0.0
            for _ in 0..<200 where refused < 3 {
                refused = try await h.metric("samlgate_connections_refused_total{reason=\"total\"}")
            }
            #expect(refused == 3, "\(silent.count) silent connections, \(refused) refused")
            #expect(try await h.send(.GET, "/healthz", to: h.probesURL).status == 200)
        }
    }
}
