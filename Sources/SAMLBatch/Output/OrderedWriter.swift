import NIOCore
import Synchronization

/// Puts chunk results back in input order and writes them, whichever worker finishes first.
///
/// The worker that completes the next chunk in order writes it (and any later ones already
/// waiting); at most one thread writes at a time, outside the lock. It tells its caller how
/// many chunks it wrote, so the runner can free their in-flight slots (``InFlightLimit``):
/// finished-but-unwritten results count against the limit too.
final class OrderedWriter: Sendable {
    private struct State {
        var next = 0
        var ready: [Int: ChunkResult] = [:]
        var writing = false
        var statistics = BatchStatistics()
        var reported = 0
        var outputFailure: String?
    }

    private let state = Mutex(State())
    private let sink: OutputSink
    private let progress: BatchProgress
    private let reportLimit: Int?
    private let report: @Sendable (String) -> Void
    private let failedFlag = Atomic<Bool>(false)

    init(
        sink: OutputSink, progress: BatchProgress, reportLimit: Int?, report: @escaping @Sendable (String) -> Void
    ) {
        self.sink = sink
        self.progress = progress
        self.reportLimit = reportLimit
        self.report = report
    }

    /// Whether the output failed; the reader stops feeding when it has.
    var hasFailed: Bool { failedFlag.load(ordering: .relaxed) }

    var statistics: BatchStatistics { state.withLock { $0.statistics } }
    var outputFailure: String? { state.withLock { $0.outputFailure } }

    /// Writes `bytes` ahead of every chunk (the CSV header); call before any chunk completes.
    func writeHeader(_ bytes: ByteBuffer) {
        if let failure = sink.write(bytes) { fail(failure) }
    }

    /// Files `result` and, unless another thread is writing, writes every result now due in
    /// order; `wrote` is told the number of chunks after each run of them is written.
    func complete(_ result: ChunkResult, wrote: (Int) -> Void) {
        var batch = state.withLock { state -> [ChunkResult] in
            state.ready[result.sequence] = result
            if state.writing { return [] }
            return Self.takeReady(&state)
        }
        while !batch.isEmpty {
            var lines: [String] = []
            for result in batch {
                if !hasFailed, let failure = sink.write(result.output) { fail(failure) }
                progress.records.add(result.statistics.records, ordering: .relaxed)
                progress.failures.add(result.statistics.failed, ordering: .relaxed)
                lines += result.reports
            }
            let toPrint = state.withLock { state -> [String] in
                for result in batch { state.statistics.merge(result.statistics) }
                let room = reportLimit.map { max(0, $0 - state.reported) } ?? lines.count
                let printed = Array(lines.prefix(room))
                if let reportLimit, state.reported < reportLimit, state.reported + lines.count > reportLimit {
                    state.reported = reportLimit + 1
                    return printed + ["further failed records are not listed here; they are in the output records"]
                }
                state.reported += printed.count
                return printed
            }
            for line in toPrint { report("samlgate batch: \(line)\n") }
            wrote(batch.count)
            batch = state.withLock { state in Self.takeReady(&state) }
        }
    }

    /// Takes the results ready in order; marks the caller as the writer, or clears the mark
    /// when there is nothing to write.
    private static func takeReady(_ state: inout State) -> [ChunkResult] {
        var taken: [ChunkResult] = []
        while let next = state.ready.removeValue(forKey: state.next) {
            taken.append(next)
            state.next += 1
        }
        state.writing = !taken.isEmpty
        return taken
    }

    private func fail(_ reason: String) {
        failedFlag.store(true, ordering: .relaxed)
        state.withLock { state in
            if state.outputFailure == nil { state.outputFailure = reason }
        }
    }
}
