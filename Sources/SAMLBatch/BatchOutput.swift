/// Where a batch run's results go.
public enum BatchOutput: Sendable, Equatable {
    /// Records on standard output (no `--out`).
    case standardOutput
    /// Records in a file (`--out FILE`), written under a temporary name and renamed at the end.
    case file(String)
    /// One `.encoded` file per record in an existing directory (`--out DIR`).
    case directory(String)
    /// Nothing written (benchmarks measure the pipeline without the disk).
    case discard
}
