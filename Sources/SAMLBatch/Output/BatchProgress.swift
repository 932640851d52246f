// What a run shows on standard error: the live progress while it runs, the summary at the end.

import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The live view on standard error: a bar redrawn in place on a terminal (records, MB/s,
/// errors, ETA), or a status line every few seconds otherwise. Counters are atomics written by
/// the reader and the ordered writer; a small thread of its own draws them.
final class BatchProgress: Sendable {
    let bytesRead = Atomic<Int>(0)
    let records = Atomic<Int>(0)
    let failures = Atomic<Int>(0)

    private let totalBytes: @Sendable (_ shouldStop: () -> Bool) -> Int?
    private let bar: Bool
    private let enabled: Bool
    private let interval: Double
    private let started: ContinuousClock.Instant
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let write: @Sendable (String) -> Void

    /// `totalBytes` is asked once, on the progress thread, and only when progress is shown; it
    /// gives up (returning `nil`) when the run ends first.
    init(
        mode: ProgressMode, interval: Double, totalBytes: @escaping @Sendable (_ shouldStop: () -> Bool) -> Int?,
        write: @escaping @Sendable (String) -> Void
    ) {
        let isTerminal = isatty(STDERR_FILENO) == 1
        bar = mode == .bar || (mode == .auto && isTerminal)
        enabled = mode != .none
        self.interval = bar ? 0.25 : max(interval, 0.1)
        self.totalBytes = totalBytes
        self.write = write
        started = .now
    }

    func start() {
        guard enabled else { return }
        let thread = Thread { [self] in
            let total = totalBytes { stopped.load(ordering: .relaxed) }
            var next = ContinuousClock.now.advanced(by: .seconds(interval))
            while !stopped.load(ordering: .relaxed) {
                usleep(50_000)
                if ContinuousClock.now >= next {
                    write(bar ? "\r" + line(total: total) + "\u{1B}[K" : "samlgate batch: " + line(total: total) + "\n")
                    next = ContinuousClock.now.advanced(by: .seconds(interval))
                }
            }
            done.signal()
        }
        thread.name = "samlgate-progress"
        thread.start()
    }

    /// Stops drawing and clears the bar.
    func finish() {
        guard enabled else { return }
        stopped.store(true, ordering: .relaxed)
        done.wait()
        if bar { write("\r\u{1B}[K") }
    }

    private func line(total totalBytes: Int?) -> String {
        let elapsed = max((ContinuousClock.now - started).seconds, 0.001)
        let read = bytesRead.load(ordering: .relaxed)
        let rate = Double(read) / elapsed
        var text =
            "\(records.load(ordering: .relaxed)) records, \(Self.megabytes(read)) MB read, "
            + "\(Self.decimal(rate / 1e6)) MB/s, \(failures.load(ordering: .relaxed)) errors"
        if let totalBytes, totalBytes > 0 {
            let fraction = min(Double(read) / Double(totalBytes), 1)
            let eta = rate > 0 ? Double(totalBytes - read) / rate : 0
            text += ", \(Int(fraction * 100))%, ETA \(Self.duration(max(eta, 0)))"
            if bar {
                let width = 24
                let filled = Int(fraction * Double(width))
                text = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] " + text
            }
        }
        return text
    }

    static func megabytes(_ bytes: Int) -> String { decimal(Double(bytes) / 1e6) }

    static func decimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}

// MARK: - The summary

/// The table printed on standard error at the end of a run.
@_spi(Benchmarks) public enum BatchSummary {
    public static func render(_ report: BatchReport, verify: Bool) -> String {
        let s = report.statistics
        var rows: [(String, String)] = [("records", "\(s.records)"), ("encoded", "\(s.encoded)")]
        if verify { rows.append(("valid", "\(s.valid)")) }
        rows.append(("failed", "\(s.failed)"))
        for (code, count) in s.failuresByCode.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            rows.append(("  " + code, "\(count)"))
        }
        let seconds = max(report.wallSeconds, 1e-6)
        rows += [
            ("input read", "\(BatchProgress.megabytes(report.inputBytes)) MB"),
            ("values in", "\(BatchProgress.megabytes(s.bytesIn)) MB"),
            ("encoded out", "\(BatchProgress.megabytes(s.bytesOut)) MB"),
            ("wall time", "\(Self.seconds(seconds)) s"),
            ("throughput", "\(Int(Double(s.records) / seconds)) records/s, \(BatchProgress.decimal(Double(report.inputBytes) / seconds / 1e6)) MB/s"),
        ]
        if let peak = report.peakResidentBytes { rows.append(("peak memory", "\(peak / (1 << 20)) MiB")) }
        if !report.unreadableInputs.isEmpty { rows.append(("unreadable inputs", "\(report.unreadableInputs.count)")) }
        if let failure = report.outputFailure { rows.append(("output failed", failure)) }
        let width = rows.map(\.0.count).max() ?? 0
        return "samlgate batch summary\n"
            + rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count + 2) + $0.1 }.joined(separator: "\n") + "\n"
    }

    private static func seconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
