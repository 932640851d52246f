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
