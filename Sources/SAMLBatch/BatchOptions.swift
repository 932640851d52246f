// A batch run's options and the types of their values: output, progress, sharding, verification.

import Foundation
import SAMLVerification
import ServerSupport
import Workers

/// Everything a batch run is told on the command line.
@_spi(Benchmarks) public struct BatchOptions: Sendable {
    /// The JSON Lines field holding the response (`--field`).
    public var field = "SAMLResponse"
    /// Filters the files found in directories (`--glob`, fnmatch syntax on the name or path).
    public var glob: String?
    public var format: OutputFormat = .jsonl
    public var output: BatchOutput = .standardOutput
    public var verification: BatchVerification?
    /// Worker threads (`--jobs`, default: one per CPU the process may use).
    public var jobs = UsableCPUs.count
    public var shard: Shard = .all
    /// A record (a file, a JSON line, a HAR entry) larger than this is reported, not read.
    public var maxRecordBytes = 16 << 20
    public var progress: ProgressMode = .auto
    /// Seconds between status lines in `lines` mode.
    public var statusInterval: Double = 10
    /// Failed records named on standard error before the rest are only counted (they are all in
    /// the output records). `nil`: every one (the default with `--out DIR`, which has no records).
    public var reportLimit: Int? = 20
    /// Records handed to a worker at once, and the bytes after which a chunk is closed early.
    public var chunkRecords = 128
    public var chunkBytes = 1 << 20

    public init() {}
}

// MARK: - Output

/// How records are written: one JSON object per line, or CSV with the same columns (RFC 4180
/// quoting; `error` and `meta` cells hold their JSON text).
@_spi(Benchmarks) public enum OutputFormat: String, Sendable, CaseIterable {
    case jsonl
    case csv
}

/// Where a batch run's results go (paths as bytes: any name the system accepts).
@_spi(Benchmarks) public enum BatchOutput: Sendable, Equatable {
    /// Records on standard output (no `--out`).
    case standardOutput
    /// Records in a file (`--out FILE`), written under a temporary name and renamed at the end.
    case file(RawPath)
    /// One `.encoded` file per record in an existing directory (`--out DIR`); with `--verify`,
    /// only for the records that verify.
    case directory(RawPath)
    /// Nothing written (benchmarks measure the pipeline without the disk).
    case discard
}

// MARK: - Progress

/// How a batch run shows that it is alive, on standard error.
@_spi(Benchmarks) public enum ProgressMode: String, Sendable, CaseIterable {
    /// A bar when standard error is a terminal, status lines otherwise.
    case auto
    /// A bar redrawn in place: records, MB/s, errors, ETA.
    case bar
    /// One status line every `--status-interval` seconds (for logs and CI).
    case lines
    /// Nothing but the summary.
    case none
}

// MARK: - Sharding

/// `--shard I/N`: this run takes the records whose index (in input order, from 0) is `I` mod
/// `N`, so N machines given the same inputs split them with no overlap and no gap.
@_spi(Benchmarks) public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public static let all = Shard(uncheckedIndex: 0, count: 1)

    private init(uncheckedIndex: Int, count: Int) {
        self.index = uncheckedIndex
        self.count = count
    }

    /// Parses `I/N` with `0 <= I < N`; `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0, index >= 0, index < count else {
            return nil
        }
        self.init(uncheckedIndex: index, count: count)
    }

    public func contains(_ recordIndex: Int) -> Bool { recordIndex % count == index }

    public var description: String { "\(index)/\(count)" }
}

// MARK: - Verification

/// How `--verify` checks records: the verifier (trust, audience, skew, algorithms), which MVPD's
/// trust applies, and the instant the time conditions are judged at.
@_spi(Benchmarks) public struct BatchVerification: Sendable {
    public var verifier: Verifier
    /// `--mvpd`: the trust for every record. Without it a record's own `mvpd` field decides,
    /// and a trust store with a single MVPD needs neither.
    public var mvpd: String?
    /// `--now`: captures are old; judging them as of their capture time tells forgery from age.
    public var now: Date?

    public init(verifier: Verifier, mvpd: String? = nil, now: Date? = nil) {
        self.verifier = verifier
        self.mvpd = mvpd
        self.now = now
    }

    /// The MVPD whose trust applies to a record naming `recordMVPD`.
    func mvpd(for recordMVPD: String?) throws(RecordError) -> String {
        if let mvpd { return mvpd }
        if let recordMVPD { return recordMVPD }
        let all = verifier.trustStore.mvpds
        if all.count == 1 { return all[0] }
        throw RecordError(
            .unknownMVPD,
            "the record names no MVPD and the trust store has \(all.count): give --mvpd or carry an mvpd field")
    }
}
