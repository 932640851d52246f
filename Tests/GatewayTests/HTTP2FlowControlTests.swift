import Foundation
import GatewayTestSupport
import Testing

/// HTTP/2 flow control as the gateway's streams are served at the connection: the client's
/// windows are given back by the gateway itself as it takes each body, so a client that keeps to
/// its windows (as every real one does) can send a body of any size, on one stream or on many at
/// once, and no more than a window's worth per stream ever waits in the gateway.
@Suite("HTTP/2: flow control of request bodies")
struct HTTP2FlowControlTests {
    typealias Raw = RawHTTP2Connection

    static let path = "/api/v1/config/REF"
    /// What a client may send before the server gives anything back, on each stream and on the
    /// connection (RFC 9113's initial windows; the gateway does not raise them).
    static let initialWindow = 65_535

    /// A body of `size` bytes whose every 16 KiB differs, so a frame lost or repeated shows.
    static func body(_ size: Int, stream: UInt32) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 / 16_384 + Int(stream) + $0 % 251) }
    }

    /// How an upload ended: each stream's status, the bytes sent on each, and whether the gateway
    /// stopped giving windows back (a read timed out waiting for them) before the bodies were sent.
    struct Outcome {
        var statuses: [UInt32: Int] = [:]
        var sent: [UInt32: Int] = [:]
        var stalled = false
    }

    /// Uploads `bodies` (stream id → body) as POSTs at once, keeping to the windows: DATA only
    /// while the stream's and the connection's windows allow, then waits for the gateway's
    /// WINDOW_UPDATEs.
    static func upload(_ bodies: [UInt32: [UInt8]], on connection: Raw) async throws -> Outcome {
        var sent: [UInt32: Int] = [:]
        var windows: [UInt32: Int] = [:]
        var connectionWindow = initialWindow
        for (stream, body) in bodies.sorted(by: { $0.key < $1.key }) {
            let head = Raw.requestBlock(method: "POST", path: path, headers: [("content-length", String(body.count))])
            try await connection.send(Raw.frame(.headers, flags: Raw.endHeaders, stream: stream, head))
            sent[stream] = 0
            windows[stream] = initialWindow
        }
        var outcome = Outcome()
        var ended: Set<UInt32> = []
        while ended.count < bodies.count {
            var frames: [UInt8] = []
            for (stream, body) in bodies.sorted(by: { $0.key < $1.key }) {
                while sent[stream]! < body.count, windows[stream]! > 0, connectionWindow > 0 {
                    let count = min(body.count - sent[stream]!, windows[stream]!, connectionWindow, 16_384)
                    let last = sent[stream]! + count == body.count
                    frames += Raw.frame(.data, flags: last ? Raw.endStream : 0, stream: stream, Array(body[sent[stream]!..<(sent[stream]! + count)]))
                    sent[stream]! += count
                    windows[stream]! -= count
                    connectionWindow -= count
                }
            }
            if !frames.isEmpty { try await connection.send(frames) }
            // What the gateway sends back: window given back, or an answer's end.
            let (read, closed) = try await connection.frames {
                $0.type == Raw.FrameType.windowUpdate.rawValue || ($0.stream != 0 && $0.endStream)
            }
            for frame in read {
                if frame.type == Raw.FrameType.windowUpdate.rawValue {
                    let increment = Int(frame.payload.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF)
                    if frame.stream == 0 { connectionWindow += increment } else { windows[frame.stream, default: 0] += increment }
                }
                if let status = frame.indexedStatus { outcome.statuses[frame.stream] = status }
                if frame.stream != 0 && frame.endStream { ended.insert(frame.stream) }
                if frame.type == Raw.FrameType.rstStream.rawValue { ended.insert(frame.stream) }
            }
            if closed {
                outcome.stalled = true
                break
            }
        }
        outcome.sent = sent
        return outcome
    }

    @Test(
        "bodies larger than the windows reach the backend whole: 256 KiB on one stream, then 3 × 160 KiB at once; the gateway gives the stream and connection windows back as it takes them"
    )
    func windowsGivenBack() async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { _, echo, port in
            let connection = try Raw(port: port, readTimeout: 30)
            let one = [UInt32(1): Self.body(256 * 1024, stream: 1)]
            let first = try await Self.upload(one, on: connection)
            #expect(!first.stalled && first.statuses == [1: 200], "\(first)")
            let three: [UInt32: [UInt8]] = [
                3: Self.body(160 * 1024, stream: 3), 5: Self.body(160 * 1024, stream: 5), 7: Self.body(160 * 1024, stream: 7),
            ]
            let next = try await Self.upload(three, on: connection)
            #expect(!next.stalled && next.statuses == [3: 200, 5: 200, 7: 200], "\(next)")
            let received = Set(echo.requests.map(\.bytes))
            #expect(echo.requests.count == 4)
            for (stream, body) in one.merging(three, uniquingKeysWith: { first, _ in first }) {
                #expect(received.contains(body), "stream \(stream)'s body did not arrive whole")
            }
        }
    }

    /// Runs `body` with the gateway's port, the gateway (h2c) in front of `upstream`, whose
    /// clocks are far off: only the backend's pace may end an upload (a loaded machine sends
    /// slowly, and a 504 would end the stream first). Always stops the upstream.
    static func withSlowBackend(
        _ upstream: (url: String, stop: @Sendable () async -> Void), _ body: (GatewayHarness) async throws -> Void
    ) async throws {
        do {
            try await withHarness(
                upstreamURL: upstream.url,
                configure: {
                    $0.h2c = true
                    $0.readTimeout = 600
                    $0.totalTimeout = 600
                }, body)
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
    }

    @Test(
        "a backend that never reads: the gateway stops giving the window back, the client waits with its body unsent (a window's worth held per stream, not the body), the connection serves another stream"
    )
    func backpressure() async throws {
        try await Self.withSlowBackend(try await FaultyUpstream.startNeverReading()) { h in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 2)
            let size = 32 << 20
            let outcome = try await Self.upload([1: Self.body(size, stream: 1)], on: connection)
            // Stalled short of the body: what the socket buffers to the backend take, and a window.
            #expect(outcome.stalled && outcome.sent[1, default: 0] < size / 2, "\(outcome.sent)")
            try await connection.send(Raw.get(3, path: "/healthz"))
            let (frames, closed) = try await connection.frames { $0.stream == 3 && $0.endStream }
            #expect(!closed && frames.contains { $0.stream == 3 && $0.indexedStatus == 200 })
        }
    }

    @Test(
        "a backend that reads slowly: each time it takes more, the gateway gives the client window back and the body goes on; 16 MiB arrive whole, answered"
    )
    func slowBackend() async throws {
        try await Self.withSlowBackend(try await FaultyUpstream.startReadingSlowly()) { h in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            let outcome = try await Self.upload([1: Self.body(16 << 20, stream: 1)], on: connection)
            #expect(!outcome.stalled && outcome.statuses == [1: 204], "\(outcome)")
        }
    }
}
