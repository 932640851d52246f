import NIOCore
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where output records go: standard output, or a file written under a temporary name and
/// renamed into place only when the run completes (an interrupted run never leaves a
/// half-written file under the name asked for), or nowhere (`--out DIR`, benchmarks).
final class OutputSink: Sendable {
    private let fd: Int32
    /// `--out FILE`: the file being written.
    private let file: ExclusiveFile?

    private init(fd: Int32, file: ExclusiveFile?) {
        self.fd = fd
        self.file = file
    }

    static func standardOutput() -> OutputSink { OutputSink(fd: STDOUT_FILENO, file: nil) }

    static func discard() -> OutputSink { OutputSink(fd: -1, file: nil) }

    /// The temporary name is hidden, so a run writing into one of its own input directories
    /// never reads it, and unpredictable (see ``ExclusiveFile``).
    static func file(_ path: RawPath) throws(RecordError) -> OutputSink {
        let file = try ExclusiveFile.create(path)
        return OutputSink(fd: file.fd, file: file)
    }

    /// Writes all of `bytes`; returns the reason when it could not.
    func write(_ bytes: ByteBuffer) -> String? {
        guard fd >= 0 else { return nil }
        return Self.writeAll(fd: fd, bytes)
    }

    /// Closes the file and moves it into place (`keep`), or removes it.
    func finish(keep: Bool) -> String? {
        file?.finish(keep: keep, sync: true)
    }

    static func writeAll(fd: Int32, _ bytes: ByteBuffer) -> String? {
        bytes.withUnsafeReadableBytes { region -> String? in
            guard var base = region.baseAddress else { return nil }
            var left = region.count
            while left > 0 {
                let n = Glibc.write(fd, base, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                base += n
                left -= n
            }
            return nil
        }
    }
}
