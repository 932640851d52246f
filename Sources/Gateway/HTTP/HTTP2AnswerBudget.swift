import NIOCore

/// The bytes of answers one HTTP/2 connection may hold for its client (`http2-answer-budget`).
/// HTTP/1.1 holds one answer per connection; HTTP/2 would hold one per stream, a hundred streams
/// at once, each read from its backend as fast as the backend sends. Two things count against
/// the budget:
///
/// - **held**: answers written to the connection's streams and not yet handed to its socket
///   (held back by the client's flow-control windows, or by a socket it does not read); counted
///   by the stream's translator on every DATA it writes, released when the write completes or
///   fails (a reset stream's writes fail), so it cannot leak;
/// - **reserved**: one read's worth (``readSize``) for every stream reading its backend now. A
///   stream reads its backend only with a reservation (``acquire()``), taken while held and
///   reserved leave room for it, and gives it back (``giveBack()``) once it stops reading: its
///   answer is whole, its stream cannot take more, or the budget is overcommitted. Every other
///   stream waits here with its backend's answer in the backend's socket, not in the gateway.
///
/// So the connection holds at most the budget plus the read each reading stream has under way —
/// and reading streams are at most the budget over a read's size (16 for 1 MiB; one when the
/// budget is smaller than a read, so that a stream always makes progress). A client that reads
/// sees no difference: what it takes is released as fast as it is written.
///
/// **A bound in time.** A connection whose held answers leave no room for a read for `stall`
/// (`total-timeout`: the bound on a client's reading an answer) is closed (``onStall``): a client
/// that opens streams and never reads cannot hold the budget for ever.
///
/// Loop-bound: one connection's streams share its event loop.
final class HTTP2AnswerBudget {
    /// The most one read of a backend brings: the upstream read buffers' largest size, one read
    /// per event (``UpstreamConnectionPool``).
    static let readSize = 65_536

    let limit: Int
    private let stall: TimeAmount
    private(set) var held = 0
    private(set) var reserved = 0
    /// Streams waiting for a reservation, first come first served; each says whether it took
    /// one (a stream gone, or not writable, leaves its turn to the next).
    private var waiting: [() -> Bool] = []
    private var stallCheck: Scheduled<Void>?
    private var fullSince: NIODeadline?
    private let eventLoop: any EventLoop
    /// Called once the held answers have left no room for a read for `stall`.
    var onStall: (() -> Void)?

    init(limit: Int, stall: TimeAmount, eventLoop: any EventLoop) {
        self.limit = limit
        self.stall = stall
        self.eventLoop = eventLoop
    }

    /// Whether a stream may start reading its backend.
    var hasRoom: Bool {
        held + reserved + Self.readSize <= limit || (reserved == 0 && held < limit)
    }

    /// The readers hold more than the budget now: a reader gives its reservation back.
    var isOvercommitted: Bool { held + reserved > limit }

    /// Takes a read's worth for a stream about to read its backend, or `false` (nothing taken).
    func acquire() -> Bool {
        guard hasRoom else { return false }
        reserved += Self.readSize
        return true
    }

    /// A stream stopped reading its backend.
    func giveBack() {
        reserved -= Self.readSize
        wake()
    }

    /// Held answers alone leave no room for another read.
    private var isFull: Bool {
        held >= (limit >= Self.readSize ? limit - Self.readSize + 1 : limit)
    }

    /// `bytes` written to a stream, not yet on their way to the client.
    func hold(_ bytes: Int) {
        held += bytes
        if isFull && fullSince == nil {
            fullSince = eventLoop.now
            armStallCheck(at: eventLoop.now + stall)
        }
    }

    /// `bytes` written out (or dropped with their stream).
    func release(_ bytes: Int) {
        held -= bytes
        if !isFull { fullSince = nil }
        wake()
    }

    /// Calls `take` once there is room for a read: it acquires a reservation and says whether it
    /// did. At once when there is room.
    func waitForRoom(_ take: @escaping () -> Bool) {
        if hasRoom && waiting.isEmpty {
            _ = take()
        } else {
            waiting.append(take)
        }
    }

    private func wake() {
        while !waiting.isEmpty, hasRoom { _ = waiting.removeFirst()() }
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
            guard let self, let since = fullSince else { return }
            let due = since + stall
            if eventLoop.now >= due { onStall?() } else { armStallCheck(at: due) }
        }
    }
}
