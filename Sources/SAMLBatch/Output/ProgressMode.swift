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
