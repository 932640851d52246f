import NIOCore

/// The bytes of answers one HTTP/2 connection holds for its client: written to its streams and
/// not yet handed to the socket (held back by the client's flow-control windows, or by a socket
/// the client does not read). HTTP/1.1 holds one answer per connection; HTTP/2 would hold one
/// per stream, a hundred streams at once, so the connection's streams share one budget
/// (`http2-answer-budget`):
///
/// - **Backpressure, not buffering.** A stream whose answer finds the budget spent stops reading
///   its backend (``UpstreamTrip/pauseResponse()``) and waits here; the backend's bytes stay in
///   its socket, not in the gateway. Streams resume one at a time as the client takes bytes, each
///   reading one more part before it looks again, so the budget is overshot by at most the parts
///   already read when it ran out.
/// - **A bound in time.** A connection whose budget stays spent for `stall` (`total-timeout`: the
///   bound on a client's reading an answer) is closed (``onStall``): a client that opens streams
///   and never reads cannot hold the budget for ever.
///
/// Counted by the stream's translator on every DATA it writes, released when the write completes
/// or fails (a reset stream's writes fail): it cannot leak. Loop-bound: one connection's streams
/// share its event loop.
final class HTTP2AnswerBudget {
    let limit: Int
    private let stall: TimeAmount
    private(set) var held = 0
    /// Streams waiting for room, first come first resumed; each says whether it resumed (a
    /// stream gone, or not writable, leaves its turn to the next).
    private var waiting: [() -> Bool] = []
    private var stallCheck: Scheduled<Void>?
    private var spentSince: NIODeadline?
    private let eventLoop: any EventLoop
    /// Called once the budget has stayed spent for `stall`.
    var onStall: (() -> Void)?

    init(limit: Int, stall: TimeAmount, eventLoop: any EventLoop) {
        self.limit = limit
        self.stall = stall
        self.eventLoop = eventLoop
    }

    /// Nothing more may be read from a backend for this connection now.
    var isSpent: Bool { held >= limit }

    /// `bytes` written to a stream, not yet on their way to the client.
    func hold(_ bytes: Int) {
        held += bytes
        if held >= limit && spentSince == nil {
            spentSince = eventLoop.now
            armStallCheck(at: eventLoop.now + stall)
        }
    }

    /// `bytes` written out (or dropped with their stream): the first stream waiting resumes.
    func release(_ bytes: Int) {
        held -= bytes
        guard held < limit else { return }
        spentSince = nil
        while !waiting.isEmpty, !waiting.removeFirst()() {}
    }

    /// Calls `resume` once there is room again (at once when there is).
    func waitForRoom(_ resume: @escaping () -> Bool) {
        if isSpent { waiting.append(resume) } else { _ = resume() }
    }

    /// A copy of `part` when it is a small slice of a large read buffer: written to a stream the
    /// client does not read, the slice would keep the whole buffer alive (a 1 KiB answer held
    /// 16 KiB, a buffer the size of the upstream read). The copy costs the part's bytes once.
    static func compacted(_ part: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard part.storageCapacity > 2 * part.readableBytes + 4096 else { return part }
        var copy = allocator.buffer(capacity: part.readableBytes)
        copy.writeImmutableBuffer(part)
        return copy
    }

    /// Stops the clock (the connection is going away).
    func close() {
        stallCheck?.cancel()
        stallCheck = nil
        onStall = nil
        waiting = []
    }

    private func armStallCheck(at deadline: NIODeadline) {
        stallCheck?.cancel()
        stallCheck = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self, let since = spentSince else { return }
            let due = since + stall
            if eventLoop.now >= due { onStall?() } else { armStallCheck(at: due) }
        }
    }
}
