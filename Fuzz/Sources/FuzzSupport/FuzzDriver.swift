import CLibFuzzer

#if canImport(Glibc)
import Glibc
#endif

/// Runs libFuzzer with the process's arguments and one target's input callback, and exits with
/// its status. Called from each target's `@main` (see `CLibFuzzer.h` for why not libFuzzer's `main`).
public enum FuzzDriver {
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    public static func run(_ callback: Callback) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv, callback)
        exit(status)
    }

    /// The input as a buffer (libFuzzer may pass a null pointer for an empty input).
    public static func input(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
        guard let data, size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: data, count: size)
    }
}
