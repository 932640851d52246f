#if canImport(Glibc)
import Glibc
#endif

/// Stops the process so libFuzzer records the input as a finding (under `Fuzz/Findings/`).
/// Prints the invariant and lengths only, never document content: libFuzzer keeps the input.
public enum FuzzFailure {
    public static func violated(_ invariant: String) -> Never {
        let line = Array("fuzz invariant violated: \(invariant)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        abort()
    }
}
