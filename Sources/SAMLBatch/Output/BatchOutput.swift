import ServerSupport

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
