import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/2 client that writes its frames by hand over a plain socket (h2c with prior
/// knowledge), so a test can send what no well-behaved client library would: resets by the
/// thousand, endless CONTINUATION frames, floods of PING and SETTINGS, stream ids out of order.
/// Header blocks are HPACK literals without indexing (no Huffman): what any decoder must take.
/// Blocking reads and writes run on threads of their own, off Swift concurrency's pool.
package final class RawHTTP2Connection: @unchecked Sendable {
    package enum FrameType: UInt8, Sendable {
        case data = 0
        case headers = 1
        case priority = 2
        case rstStream = 3
        case settings = 4
        case pushPromise = 5
        case ping = 6
        case goAway = 7
        case windowUpdate = 8
        case continuation = 9
    }

    package struct Frame: Sendable {
        package let type: UInt8
        package let flags: UInt8
        package let stream: UInt32
        package let payload: [UInt8]

        package var endStream: Bool { flags & 0x1 != 0 }
        /// A GOAWAY's error code (`ENHANCE_YOUR_CALM` is 11, `PROTOCOL_ERROR` 1).
        package var goAwayCode: UInt32? {
            guard type == FrameType.goAway.rawValue, payload.count >= 8 else { return nil }
            return payload[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        }
        /// A GOAWAY's last stream id: the highest the server will still answer.
        package var goAwayLastStream: UInt32? {
            guard type == FrameType.goAway.rawValue, payload.count >= 8 else { return nil }
            return payload[0..<4].reduce(0) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
        }
        /// A RST_STREAM's error code (`PROTOCOL_ERROR` 1, `REFUSED_STREAM` 7).
        package var resetCode: UInt32? {
            guard type == FrameType.rstStream.rawValue, payload.count == 4 else { return nil }
            return payload.reduce(0) { $0 << 8 | UInt32($1) }
        }
        /// A response's `:status` when the encoder sent it as a static-table index (200, 204, 206,
        /// 304, 400, 404, 500), which swift-nio-http2 does for those.
        package var indexedStatus: Int? {
            guard type == FrameType.headers.rawValue, let first = payload.first else { return nil }
            return [0x88: 200, 0x89: 204, 0x8A: 206, 0x8B: 304, 0x8C: 400, 0x8D: 404, 0x8E: 500][Int(first)]
        }
    }

    package static let enhanceYourCalm: UInt32 = 11
    package static let protocolError: UInt32 = 1
    package static let refusedStream: UInt32 = 7
    package static let endStream: UInt8 = 0x1
    package static let endHeaders: UInt8 = 0x4

    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects, and sends the preface and a SETTINGS frame (`settings`: identifier and value pairs).
    package init(port: Int, settings: [(UInt16, UInt32)] = [], readTimeout: Int = 10) throws {
        fd = try RawConnection.connectedSocket(port: port, readTimeout: readTimeout)
        var payload: [UInt8] = []
        for (identifier, value) in settings {
            payload += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)] + Self.bytes(value, count: 4)
        }
        try writeNow(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + Self.frame(.settings, flags: 0, stream: 0, payload))
    }

    deinit { close(fd) }

    // MARK: Frames

    package static func frame(_ type: FrameType, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        bytes(UInt32(payload.count), count: 3) + [type.rawValue, flags] + bytes(stream & 0x7FFF_FFFF, count: 4) + payload
    }

    /// A request's header block: the pseudo-headers, then `headers`.
    package static func requestBlock(method: String, path: String, headers: [(String, String)] = []) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in [(":method", method), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1")] + headers {
            block += literal(name, value)
        }
        return block
    }

    /// A whole GET on `stream` (END_HEADERS and END_STREAM), with `headers` after the pseudo-headers.
    package static func get(_ stream: UInt32, path: String, headers: [(String, String)] = []) -> [UInt8] {
        frame(.headers, flags: endHeaders | endStream, stream: stream, requestBlock(method: "GET", path: path, headers: headers))
    }

    /// `count` v1 exchanges opened on streams 1, 3, 5, … whose bodies never come: each stream
    /// stays open, waiting.
    package static func openExchanges(_ count: Int) -> [UInt8] {
        let post = requestBlock(method: "POST", path: "/api/v1/tokens/authn", headers: [("content-type", "application/x-www-form-urlencoded")])
        var frames: [UInt8] = []
        for index in 0..<count { frames += frame(.headers, flags: endHeaders, stream: UInt32(2 * index + 1), post) }
        return frames
    }

    /// `count` copies of one frame, as one write (a flood).
    package static func repeated(_ frame: [UInt8], _ count: Int) -> [UInt8] {
        Array([[UInt8]](repeating: frame, count: count).joined())
    }

    /// A header block as a HEADERS frame and as many CONTINUATION frames as it takes at
    /// `pieceSize` bytes each (END_HEADERS on the last; END_STREAM on the HEADERS when `endStream`).
    package static func headerFrames(_ stream: UInt32, _ block: [UInt8], endStream: Bool, pieceSize: Int = 16_384) -> [UInt8] {
        var pieces: [[UInt8]] = stride(from: 0, to: block.count, by: pieceSize).map { Array(block[$0..<min($0 + pieceSize, block.count)]) }
        if pieces.isEmpty { pieces = [[]] }
        var frames: [UInt8] = []
        for (index, piece) in pieces.enumerated() {
            let last = index == pieces.count - 1
            if index == 0 {
                frames += frame(.headers, flags: (last ? endHeaders : 0) | (endStream ? Self.endStream : 0), stream: stream, piece)
            } else {
                frames += frame(.continuation, flags: last ? endHeaders : 0, stream: stream, piece)
            }
        }
        return frames
    }

    /// The acknowledgement of the server's SETTINGS: its limits (the header list size among
    /// them) apply from here on.
    package static let settingsAck = frame(.settings, flags: 0x1, stream: 0, [])

    /// A PING, unacknowledged.
    package static let ping = frame(.ping, flags: 0, stream: 0, [UInt8](repeating: 7, count: 8))

    /// HPACK "literal header field without indexing, new name", no Huffman coding.
    package static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00] + integer(name.utf8.count, prefix: 7) + Array(name.utf8) + integer(value.utf8.count, prefix: 7) + Array(value.utf8)
    }

    /// HPACK's integer with an `prefix`-bit prefix (RFC 7541 §5.1), the flag bits above it zero.
    package static func integer(_ value: Int, prefix: Int) -> [UInt8] {
        let limit = (1 << prefix) - 1
        guard value >= limit else { return [UInt8(value)] }
        var out: [UInt8] = [UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            out.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        out.append(UInt8(rest))
        return out
    }

    package static func bytes(_ value: UInt32, count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8((value >> (8 * UInt32($0))) & 0xFF) }
    }

    // MARK: Sending and reading

    package func send(_ bytes: [UInt8]) async throws {
        try await Self.onThread { [self] in try writeNow(bytes) }
    }

    /// Sends a PING and reads until its acknowledgement: the server has processed every frame
    /// sent before it (a stream opened is open on the server). The frames read on the way.
    @discardableResult
    package func roundTrip() async throws -> [Frame] {
        try await send(Self.ping)
        let (frames, closed) = try await frames { $0.type == FrameType.ping.rawValue && $0.flags & 0x1 != 0 }
        guard !closed else { throw POSIXError(.ECONNRESET) }
        return frames
    }

    /// Half-closes: the server reads the end of the stream, the connection stays open for answers.
    package func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes both directions, as a client that goes away does (the descriptor itself is closed
    /// with this object).
    package func shutdownBoth() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Frames until one satisfies `stop` (included), or the server closes, or a read times out.
    package func frames(until stop: @escaping @Sendable (Frame) -> Bool) async throws -> (frames: [Frame], closed: Bool) {
        try await Self.onThread { [self] in
            var frames: [Frame] = []
            while true {
                guard let frame = readFrame() else { return (frames, true) }
                frames.append(frame)
                if stop(frame) { return (frames, false) }
            }
        }
    }

    /// Reads to the end: the frames, and whether the server closed (`false`: a read timed out).
    package func framesUntilClose() async throws -> (frames: [Frame], closed: Bool) {
        try await Self.onThread { [self] in
            var frames: [Frame] = []
            while true {
                guard let frame = readFrame() else { return (frames, errno != EAGAIN && errno != EWOULDBLOCK) }
                frames.append(frame)
            }
        }
    }

    private func writeNow(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            sent += n
        }
    }

    private func readFrame() -> Frame? {
        while true {
            if pending.count >= 9 {
                let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
                if pending.count >= 9 + length {
                    let stream = pending[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
                    let frame = Frame(type: pending[3], flags: pending[4], stream: stream, payload: Array(pending[9..<(9 + length)]))
                    pending.removeFirst(9 + length)
                    return frame
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            pending += buffer[..<n]
        }
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
