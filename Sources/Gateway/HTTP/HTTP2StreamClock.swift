import NIOCore

/// What the shared clock of an HTTP/2 connection tells one of its streams: a deadline it asked
/// for (``HTTP2StreamClock/wake(_:at:)``) is due. The stream looks at its clocks — the client's
/// idle clock, its trip's read and total deadlines — and asks again for its next one.
protocol ClockedStream: AnyObject {
    func clockDue()
}

/// One timer for all the streams of an HTTP/2 connection. A stream serves one request: a timer of
/// its own would be a task scheduled (a heap insertion and a closure) and cancelled per request.
/// Here a stream notes its next deadline in a table; the one timer is moved only when a deadline
/// falls before the one it is set for (rare: a new stream's deadlines lie after those of the
/// streams before it) and, when it fires, tells the streams that are due and looks at the
/// others' for its next time (at most ``HTTP2Limits/maxConcurrentStreams`` of them).
///
/// Used on the connection's event loop only.
final class HTTP2StreamClock {
    private let eventLoop: any EventLoop
    private var deadlines: [ObjectIdentifier: (stream: any ClockedStream, at: NIODeadline)] = [:]
    private var timer: Scheduled<Void>?
    private var timerAt: NIODeadline = .distantFuture

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// `stream`'s next deadline (replacing the one it asked for before).
    func wake(_ stream: any ClockedStream, at deadline: NIODeadline) {
        deadlines[ObjectIdentifier(stream)] = (stream, deadline)
        if deadline < timerAt { arm(at: deadline) }
    }

    /// `stream` has no deadline any more (it is gone). The timer is left: it finds nothing of it.
    func forget(_ stream: any ClockedStream) {
        deadlines[ObjectIdentifier(stream)] = nil
    }

    /// The connection is gone.
    func stop() {
        timer?.cancel()
        timer = nil
        timerAt = .distantFuture
        deadlines = [:]
    }

    private func arm(at deadline: NIODeadline) {
        timer?.cancel()
        timerAt = deadline
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.fired()
        }
    }

    private func fired() {
        timer = nil
        timerAt = .distantFuture
        let now = eventLoop.now
        let due = deadlines.filter { $0.value.at <= now }
        for (id, entry) in due {
            deadlines[id] = nil
            // A stream asks for its next deadline here (``wake(_:at:)``), which may arm the timer.
            entry.stream.clockDue()
        }
        guard let next = deadlines.values.lazy.map(\.at).min(), next < timerAt else { return }
        arm(at: next)
    }
}
