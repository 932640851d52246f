import Foundation
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
