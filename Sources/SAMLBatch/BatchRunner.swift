// Running a batch, and what a run reports: its statistics, the chunks in flight, peak memory.

import Dispatch
import Foundation
import NIOCore
import ServerSupport
import Workers

#if canImport(Glibc)
import Glibc
#endif

/// Runs a batch: the calling thread reads the inputs into chunks of records, the worker pool
/// encodes (and verifies) chunks in parallel, and the ordered writer puts the results out in
/// input order. At most `3 × jobs` chunks are in flight, read or unwritten (``InFlightLimit``,
/// taken and given back here), so memory stays bounded whatever the input's size.
@_spi(Benchmarks) public enum BatchRunner {
    /// Runs over `inputs` (files, directories, `-`) named by UTF-8 paths.
    public static func run(
        inputs: [String], options: BatchOptions, diagnostics: @escaping @Sendable (String) -> Void
    ) -> BatchReport {
        run(paths: inputs.map(RawPath.init), options: options, diagnostics: diagnostics)
    }

    /// Runs over `paths` (files, directories, `-`), kept as bytes so that names which are not
    /// UTF-8 still open; `diagnostics` receives everything meant for standard error (progress,
    /// failed records).
    public static func run(
        paths inputs: [RawPath], options: BatchOptions, diagnostics: @escaping @Sendable (String) -> Void
    ) -> BatchReport {
        let clock = ContinuousClock()
        let started = clock.now
        let progress = BatchProgress(
            mode: options.progress, interval: options.statusInterval,
            totalBytes: { totalSize(InputExpander(inputs, glob: options.glob), shouldStop: $0) }, write: diagnostics)

        let sink: OutputSink
        switch options.output {
        case .standardOutput: sink = .standardOutput()
        case .directory, .discard: sink = .discard()
        case .file(let path):
            do {
                sink = try .file(path)
            } catch {
                return BatchReport(
                    statistics: BatchStatistics(), unreadableInputs: [], outputFailure: error.message, inputBytes: 0,
                    wallSeconds: 0, peakResidentBytes: PeakMemory.residentBytes())
            }
        }
        var directory: RawPath?
        if case .directory(let path) = options.output { directory = path }
        let formatter = RecordFormatter(format: options.format, verify: options.verification != nil)
        let processor = RecordProcessor(formatter: formatter, verification: options.verification, directory: directory)

        let jobs = max(1, options.jobs)
        let inFlight = jobs * 3
        let limit = InFlightLimit(inFlight)
        let pool = WorkerPool(threads: jobs, queueLimit: inFlight, name: "saml-batch")
        let writer = OrderedWriter(
            sink: sink, progress: progress, reportLimit: directory == nil ? options.reportLimit : nil, report: diagnostics)
        if options.format == .csv, directory == nil {
            writer.writeHeader(ByteBuffer(string: formatter.csvHeader))
        }

        progress.start()
        let reader = BatchReader(options: options, progress: progress, shouldStop: { writer.hasFailed }) { chunk in
            // A chunk holds its slot from being read until it is written.
            limit.acquire()
            let job: @Sendable () -> Void = { writer.complete(processor.process(chunk), wrote: limit.release) }
            // The limit keeps the queue within its bound, so a refusal means the pool stopped:
            // process here rather than lose the chunk.
            if pool.enqueue(job) != nil { job() }
        }
        reader.read(InputExpander(inputs, glob: options.glob))
        limit.waitUntilAllReleased()
        pool.shutdown()
        progress.finish()

        var outputFailure = writer.outputFailure
        if let failure = sink.finish(keep: outputFailure == nil) { outputFailure = outputFailure ?? failure }
        return BatchReport(
            statistics: writer.statistics,
            unreadableInputs: reader.unreadableInputs,
            outputFailure: outputFailure,
            inputBytes: reader.bytesRead,
            wallSeconds: (clock.now - started).seconds,
            peakResidentBytes: PeakMemory.residentBytes())
    }

    /// The total size of the regular input files, for the ETA; `nil` when standard input is
    /// among them (its size is unknown). Walked again by the progress thread, so the reader
    /// does not wait for it.
    private static func totalSize(_ entries: InputExpander, shouldStop: () -> Bool) -> Int? {
        var total = 0
        for entry in entries {
            if shouldStop() { return nil }
            switch entry {
            case .standardInput: return nil
            case .unreadable, .skipped: continue
            case .file(let path, _):
                var info = stat()
                if path.withCString({ stat($0, &info) }) == 0 { total += Int(info.st_size) }
            }
        }
        return total
    }
}

// MARK: - The report

/// The outcome of a batch run, for the summary and the exit status.
@_spi(Benchmarks) public struct BatchReport: Sendable {
    public var statistics: BatchStatistics
    /// Inputs that could not be opened or read (the run went on without them).
    public var unreadableInputs: [String]
    /// Why the output could not be written, when it could not.
    public var outputFailure: String?
    /// Bytes read from the input files (compressed bytes for gzip).
    public var inputBytes: Int
    public var wallSeconds: Double
    /// Peak resident memory of the process (VmHWM), in bytes, when the system tells it.
    public var peakResidentBytes: Int?
}

/// Counts for the summary and the progress line, merged chunk by chunk.
@_spi(Benchmarks) public struct BatchStatistics: Sendable, Equatable {
    public var records = 0
    /// Records whose value was brought to the cookbook form.
    public var encoded = 0
    /// Records with an error of any kind (unencodable, or not valid with `--verify`).
    public var failed = 0
    /// With `--verify`: records whose signature and SAML rules checked out.
    public var valid = 0
    /// Failed records by error code.
    public var failuresByCode: [String: Int] = [:]
    /// Bytes of the response values read (after JSON unescaping or form decoding).
    public var bytesIn = 0
    /// Bytes of cookbook-encoded values produced.
    public var bytesOut = 0

    public init() {}

    mutating func fail(_ code: String) {
        failed += 1
        failuresByCode[code, default: 0] += 1
    }

    mutating func merge(_ other: BatchStatistics) {
        records += other.records
        encoded += other.encoded
        failed += other.failed
        valid += other.valid
        bytesIn += other.bytesIn
        bytesOut += other.bytesOut
        for (code, count) in other.failuresByCode { failuresByCode[code, default: 0] += count }
    }
}

// MARK: - Bounded memory

/// How many chunks may be in flight at once — read and not yet written, whether queued, being
/// processed or finished and waiting for their turn in the output — so memory stays bounded
/// whatever the input's size. ``BatchRunner`` takes a slot for each chunk the reader hands on
/// and gives it back when the ordered writer has written that chunk.
final class InFlightLimit: Sendable {
    private let slots: DispatchSemaphore
    private let taken = DispatchGroup()

    init(_ limit: Int) {
        slots = DispatchSemaphore(value: limit)
    }

    /// Waits for a free slot and takes it for one chunk.
    func acquire() {
        slots.wait()
        taken.enter()
    }

    /// Gives back the slots of `count` chunks just written.
    func release(_ count: Int) {
        for _ in 0..<count {
            slots.signal()
            taken.leave()
        }
    }

    /// Waits until every slot taken was given back: every chunk read is written.
    func waitUntilAllReleased() {
        taken.wait()
    }
}

/// The process's peak resident memory (`VmHWM` in `/proc/self/status`), shown in the summary
/// so an operator sees that a run stayed within its memory budget.
enum PeakMemory {
    static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }
}
