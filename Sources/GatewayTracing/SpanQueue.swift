import Synchronization

/// The finished spans waiting for the exporter: filled by the event loops (one short lock per
/// recorded request), emptied by ``OTLPSpanExporter`` in batches. Bounded: spans beyond
/// ``capacity`` are dropped and counted, never waited for.
final class SpanQueue: Sendable {
    private struct State {
        var spans: [FinishedSpan] = []
        var dropped = 0
        /// The exporter was woken for a full batch it has not taken yet.
        var woken = false
    }

    let capacity: Int
    let batchSize: Int
    private let state = Mutex(State())
    /// One element per wake-up: a batch is full, or the schedule's tick.
    let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(capacity: Int, batchSize: Int) {
        self.capacity = capacity
        self.batchSize = batchSize
        (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// A request's spans, all of them or (the queue full) none: the exporter is woken once per
    /// full batch, not per request.
    func submit(_ spans: [FinishedSpan]) {
        let full = state.withLock { state -> Bool in
            guard state.spans.count + spans.count <= capacity else {
                state.dropped += spans.count
                return false
            }
            state.spans += spans
            guard state.spans.count >= batchSize, !state.woken else { return false }
            state.woken = true
            return true
        }
        if full { wake.yield() }
    }

    /// Everything waiting, and how many spans were dropped since the last call.
    func takeAll() -> (spans: [FinishedSpan], dropped: Int) {
        state.withLock { state in
            let taken = (state.spans, state.dropped)
            state.spans = []
            state.spans.reserveCapacity(min(capacity, taken.0.count))
            state.dropped = 0
            state.woken = false
            return taken
        }
    }

    /// Wakes the exporter (its schedule).
    func tick() {
        wake.yield()
    }

    /// No more wake-ups: the exporter flushes what is left and stops.
    func finish() {
        wake.finish()
    }
}
