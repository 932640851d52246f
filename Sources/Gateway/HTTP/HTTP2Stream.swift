import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One stream of an HTTP/2 connection, served by a ``RequestDriver`` without a channel of its
/// own: its connection's handler (``HTTP2Streams``) hands it the stream's frames, and it hands
/// the driver HTTP/1-style request parts and writes the driver's answer as frames. What it does
/// beyond a translation:
///
/// - **The head read strictly** (``HTTPRequestHead/init(http2:endStream:)``): a request the
///   gateway would forward otherwise than an HTTP/1.1 backend reads it is refused on its stream
///   (the driver answers `400`/`431` with the error's code, and the streams beside it go on).
/// - **Nothing complete upstream before the stream proves valid.** The last DATA frame received
///   is held until the next one or the end of the stream, so a stream that turns out malformed
///   at its end (DATA past its `content-length`, trailers that are not) is reset with its request
///   one frame short at the backend: never a complete request the client's stream disowns. The
///   cost is one frame (16 KiB at most) per uploading stream, held until its next frame.
/// - **One client's streams bounded** (`max-streams-per-client`, ``ConnectionCaps``): a stream
///   beyond its client's cap is refused with `REFUSED_STREAM` (the client may retry it) before it
///   reaches a backend.
/// - **Flow control by what the driver takes.** The stream's window is given back to the client
///   as the driver takes the body; while the driver holds its reads (the backend takes the body
///   slower than it comes) the parts wait here, at most a window's worth, and the client waits.
/// - **Writable while its answer is out.** Answer bytes written and not yet handed to the socket
///   (held back by the client's window for the stream, or a socket it does not read) count
///   against the stream (``isWritable``: the driver stops reading the backend) and against the
///   connection's ``HTTP2AnswerBudget``, released as the writes complete or fail.
final class HTTP2Stream: RequestTransport {
    private enum Phase {
        /// No HEADERS yet.
        case head
        /// The head passed on, its body arriving.
        case body
        /// The request is whole.
        case ended
        /// Refused: whatever else the client sends on the stream is dropped.
        case dropping
    }

    /// The window the client starts each stream with (the gateway does not change
    /// `SETTINGS_INITIAL_WINDOW_SIZE`), given back once half of it is taken.
    static let window = 65_535
    /// Answer bytes out of the socket's reach above which the stream is not writable, and below
    /// which it is again (a backend read's worth; the answer budget bounds the connection).
    static let unsentHigh = HTTP2AnswerBudget.readSize
    static let unsentLow = HTTP2AnswerBudget.readSize / 2

    let id: HTTP2StreamID
    /// The connection's handler, which outlives its streams (it ends each one when it goes).
    private unowned let connection: HTTP2Streams
    private let driver: RequestDriver
    private var phase = Phase.head
    /// The last DATA received, passed on when the next one comes or the stream ends, with its
    /// flow-controlled length.
    private var heldRequestPart: (part: ByteBuffer, window: Int)?
    /// Counted in the client's open streams (released when the stream goes).
    private var admitted = false
    /// Parts the driver has not asked for yet, with their flow-controlled length.
    private var waiting = CircularBuffer<(part: HTTPServerRequestPart, window: Int)>(initialCapacity: 0)
    /// The driver holds its reads.
    private var paused = false
    /// Flow-controlled bytes the driver took and the client was not given back yet.
    private var taken = 0
    /// Answer bytes written and not yet handed to the socket.
    private var unsent = 0
    /// The answer's last part, not written yet (``hold(_:)``).
    private var held: ByteBuffer?
    /// The driver's trip reads its backend with a reservation of the connection's answer budget.
    private var reading = false
    /// The stream waits in the budget's line for a reservation.
    private var waitingForRoom = false
    /// The unsent bytes are below the high mark (or fell back to the low one since they were not).
    private var unsentBelowMark = true
    /// The writability the driver last saw: it hears when the stream turns writable again.
    private var seenWritable = true
    /// Over: closed by either side, or the connection gone. Nothing is written any more.
    private(set) var isClosed = false
    /// A WINDOW_UPDATE of this stream was refused: the refusal reported next is not the stream's end.
    private var windowUpdateRefused = false
    /// Frames arrived in the connection's current batch of reads.
    var readInBatch = false

    init(id: HTTP2StreamID, connection: HTTP2Streams, core: GatewayCore, eventLoop: any EventLoop, tls: TLSSession?) {
        self.id = id
        self.connection = connection
        driver = RequestDriver(core: core, eventLoop: eventLoop, tls: tls, streams: connection)
        driver.attach(self)
    }

    // MARK: - the request

    /// A frame of this stream, from the client.
    func received(_ payload: HTTP2Frame.FramePayload) {
        guard !isClosed else { return }
        readInBatch = true
        switch payload {
        case .headers(let headers):
            switch phase {
            case .head: head(headers)
            case .body:
                // Trailers (swift-nio-http2 has checked they end the stream and hold no pseudo-header).
                phase = .ended
                passHeld()
                deliver(.end(HTTPHeaders(headers.headers.map { ($0.name, $0.value) })))
            case .ended, .dropping: break
            }
        case .data(let frame):
            let window = frame.data.readableBytes + (frame.paddingBytes.map { $0 + 1 } ?? 0)
            guard phase == .body, case .byteBuffer(let bytes) = frame.data else { return }
            if frame.endStream {
                // The client sends nothing more: no window is given back from here on
                // (swift-nio-http2 refuses a WINDOW_UPDATE on a stream its client has ended).
                phase = .ended
                passHeld()
                if bytes.readableBytes > 0 { deliver(.body(bytes), window: window) }
                deliver(.end(nil))
            } else if bytes.readableBytes > 0 {
                passHeld()
                heldRequestPart = (bytes, window)
            } else {
                giveBack(window)
            }
        default:
            break
        }
    }

    private func head(_ headers: HTTP2Frame.FramePayload.Headers) {
        guard connection.caps.admitStream(connection.client) else {
            phase = .dropping
            connection.metrics.http2StreamReset(.clientLimit)
            reset(.refusedStream)
            return
        }
        admitted = true
        do {
            let head = try HTTPRequestHead(http2: headers.headers, endStream: headers.endStream)
            phase = headers.endStream ? .ended : .body
            deliver(.head(head))
            if headers.endStream { deliver(.end(nil)) }
        } catch {
            phase = .dropping
            driver.refuseNextHead(error)
            deliver(.head(Self.refusedHead(headers.headers)))
            deliver(.end(nil))
        }
    }

    private func passHeld() {
        guard let (part, window) = heldRequestPart else { return }
        heldRequestPart = nil
        deliver(.body(part), window: window)
    }

    /// Gives `part` to the driver, or keeps it until the driver reads again.
    private func deliver(_ part: HTTPServerRequestPart, window: Int = 0) {
        guard !paused, waiting.isEmpty else { return waiting.append((part, window)) }
        take(part, window: window)
    }

    private func take(_ part: HTTPServerRequestPart, window: Int) {
        driver.received(part)
        giveBack(window)
        if !isClosed && !driver.readRequested() { paused = true }
    }

    /// Gives the client back window the driver has taken, once it is half the stream's window
    /// (not after the body's end: the stream's window no longer matters).
    private func giveBack(_ window: Int) {
        taken += window
        guard taken >= Self.window / 2, phase == .body, !isClosed else { return }
        // Refused when the client's END_STREAM arrived while the update waited behind a socket
        // the client does not read: harmless, the stream goes on (``writeFailed()``).
        let written = connection.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenFailure { _ in self.windowUpdateRefused = true }
        connection.write(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: taken)), promise: written)
        taken = 0
    }

    /// swift-nio-http2 refused a frame written to this stream: a WINDOW_UPDATE (the client ended
    /// its body meanwhile) changes nothing; anything else ends the stream.
    func writeFailed() {
        if windowUpdateRefused {
            windowUpdateRefused = false
            return
        }
        close()
    }

    /// The server is shutting down: the stream ends once its answer is written (at once when it
    /// is, and only the body still arrives).
    func quiesce() {
        driver.quiesce()
    }

    /// The end of the connection's batch of reads.
    func readComplete() {
        readInBatch = false
        driver.readComplete()
    }

    /// The client half-closed its connection: a request not yet whole never will be.
    func clientInputClosed() {
        guard phase == .body else { return }
        phase = .dropping
        heldRequestPart = nil
        close()
    }

    /// What a refused request is recorded as: its method and path when they are readable, no
    /// header but those the refusal's rendering reads.
    private static func refusedHead(_ fields: HPACKHeaders) -> HTTPRequestHead {
        let method = fields.first(name: ":method").flatMap { HTTPRequestHead.isToken($0) ? $0 : nil } ?? "-"
        let path = fields.first(name: ":path").flatMap { $0.utf8.first == UInt8(ascii: "/") ? $0 : nil } ?? "/"
        var headers = HTTPHeaders()
        for name in ["accept", "x-request-id"] { if let value = fields.first(name: name) { headers.add(name: name, value: value) } }
        return HTTPRequestHead(version: HTTPVersion(major: 2, minor: 0), method: HTTPMethod(rawValue: method), uri: path, headers: headers)
    }

    // MARK: - the stream's end

    /// The stream is over (swift-nio-http2 closed it: both ends sent, a reset either way), or
    /// its connection is gone: the request is recorded, its work dropped.
    func ended() {
        guard !isClosed else { return }
        isClosed = true
        heldRequestPart = nil
        if let part = held {
            held = nil
            released(part.readableBytes)
        }
        stoppedReading()
        waiting.removeAll()
        driver.inactive()
        driver.detach()
        if admitted { connection.caps.releaseStream(connection.client) }
        admitted = false
    }

    /// Resets the stream (unless it is over) with `code`, and ends it here.
    private func reset(_ code: HTTP2ErrorCode) {
        guard !isClosed else { return }
        connection.write(HTTP2Frame(streamID: id, payload: .rstStream(code)), promise: nil)
        connection.flush()
        connection.streamEnded(self)
    }

    // MARK: - RequestTransport: the answer

    /// What the driver reads is what it is told of later: a stream it saw not writable is
    /// reported writable again (``writabilityMayHaveChanged()``), whatever made it so.
    var isWritable: Bool {
        let writable = !isClosed && unsentBelowMark && connection.isWritable
        if !writable { seenWritable = false }
        return writable
    }

    /// The connection's writability or the stream's unsent bytes changed: the driver hears of the
    /// stream's turning writable again.
    func writabilityMayHaveChanged() {
        let now = isWritable
        defer { seenWritable = now }
        if now && !seenWritable { driver.becameWritable() }
    }

    var remoteAddress: SocketAddress? { connection.remoteAddress }

    func write(_ part: HTTPServerResponsePart) {
        write(part, promise: nil)
    }

    private func write(_ part: HTTPServerResponsePart, promise: EventLoopPromise<Void>?) {
        guard !isClosed else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch part {
        case .head(let head):
            connection.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: Self.fields(of: head)))), promise: promise)
        case .body(.byteBuffer(let bytes)):
            hold(bytes)
            promise?.succeed()
        case .body(.fileRegion):
            promise?.fail(ChannelError.operationUnsupported)
        case .end(let trailers?):
            writeHeld(endStream: false, promise: nil)
            let headers = HPACKHeaders(httpHeaders: trailers, normalizeHTTPHeaders: true)
            connection.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true))), promise: promise)
        case .end(nil):
            // The end rides on the answer's last DATA frame: one frame fewer per answer.
            guard !writeHeld(endStream: true, promise: promise) else { return }
            connection.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))), promise: promise)
        }
    }

    /// The names HTTP/2 forbids in a message (RFC 9113 §8.2.2), left out of an answer's head.
    private static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    /// An answer's head as HTTP/2 fields: `:status` first, names lower-cased, the connection-specific
    /// ones left out. `x-request-id` is never put in the HPACK dynamic table: its value is new on
    /// every answer, so indexing it would only evict what repeats (`server`, `content-type`, the
    /// date of this second) and lengthen the table every later field is looked up in.
    static func fields(of head: HTTPResponseHead) -> HPACKHeaders {
        var fields = HPACKHeaders()
        fields.reserveCapacity(head.headers.count + 1)
        fields.add(name: ":status", value: String(head.status.code))
        for (name, value) in head.headers {
            let lower = name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? name.lowercased() : name
            if connectionSpecific.contains(lower) { continue }
            fields.add(name: lower, value: value, indexing: lower == "x-request-id" ? .nonIndexable : .indexable)
        }
        return fields
    }

    /// Keeps an answer's part as the stream's last DATA, written when the next part, the end or a
    /// flush comes (so the end rides on it). Counted against the stream and the connection's
    /// answer budget from now until it is handed to the socket, or dropped with the stream.
    private func hold(_ bytes: ByteBuffer) {
        writeHeld(endStream: false, promise: nil)
        let part = HTTP2AnswerBudget.compacted(bytes, allocator: connection.allocator)
        connection.budget.hold(part.readableBytes)
        unsent += part.readableBytes
        if unsent >= Self.unsentHigh {
            unsentBelowMark = false
            seenWritable = false
        }
        held = part
    }

    /// Writes the held part, if any; returns whether there was one. swift-nio-http2 fails the
    /// write of a stream that ended meanwhile: released then.
    @discardableResult
    private func writeHeld(endStream: Bool, promise: EventLoopPromise<Void>?) -> Bool {
        guard let part = held else { return false }
        held = nil
        let count = part.readableBytes
        let written = promise ?? connection.eventLoop.makePromise()
        written.futureResult.assumeIsolated().whenComplete { _ in self.released(count) }
        connection.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(part), endStream: endStream))), promise: written)
        return true
    }

    /// `count` answer bytes are out of the stream: the budget and the stream's writability follow.
    private func released(_ count: Int) {
        connection.budget.release(count)
        unsent -= count
        if unsent <= Self.unsentLow { unsentBelowMark = true }
        writabilityMayHaveChanged()
    }

    func flush() {
        writeHeld(endStream: false, promise: nil)
        connection.flush()
    }

    func writeAndFlush(_ part: HTTPServerResponsePart, thenClose: Bool) {
        guard thenClose else {
            write(part)
            return flush()
        }
        // The answer is whole: a client still sending its body is told to stop without error
        // (RFC 9113 §8.1), and keeps the answer.
        let written = connection.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { result in
            if case .success = result { self.reset(.noError) } else { self.reset(.cancel) }
        }
        write(part, promise: written)
        flush()
    }

    func read() {
        paused = false
        var took = false
        while !paused, !isClosed, let next = waiting.popFirst() {
            take(next.part, window: next.window)
            took = true
        }
        // Outside the connection's batch of reads (the backend took more of the body): what the
        // parts made — the trip's writes, a window given back — goes out now.
        guard took, !readInBatch, !isClosed else { return }
        driver.readComplete()
        connection.flush()
    }

    /// Ends the stream: a reset (`CANCEL`) unless it is over already.
    func close() {
        reset(.cancel)
    }

    // MARK: - RequestTransport: the connection's answer budget

    /// The stream reads its backend with a reservation of the connection's answer budget: held
    /// already, or taken now; else it waits for room in turn (``readWhenRoom()``).
    func mayRead() -> Bool {
        if reading { return true }
        if connection.budget.acquire() {
            reading = true
            return true
        }
        waitForRoom()
        return false
    }

    func stoppedReading() {
        guard reading else { return }
        reading = false
        connection.budget.giveBack()
    }

    var holdsTooMuch: Bool { connection.budget.isOvercommitted }

    func readWhenRoom() {
        stoppedReading()
        waitForRoom()
    }

    /// Waits in the budget's line (once at a time) for room for a read; the driver's trip goes on
    /// reading once one is taken, if the stream can take its answer (its writability resumes it
    /// otherwise).
    private func waitForRoom() {
        guard !waitingForRoom else { return }
        waitingForRoom = true
        connection.budget.waitForRoom { [weak self] in
            guard let self else { return false }
            waitingForRoom = false
            guard !isClosed, !reading, driver.hasTrip, isWritable, connection.budget.acquire() else { return false }
            reading = true
            driver.resumeTrip()
            return true
        }
    }
}
