import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Where output records go: standard output, or a file written under a temporary name and
/// renamed into place only when the run completes (an interrupted run never leaves a
/// half-written file under the name asked for), or nowhere (`--out DIR`, benchmarks).
final class OutputSink: Sendable {
    private let fd: Int32
    private let temporaryPath: String?
    private let finalPath: String?

    private init(fd: Int32, temporaryPath: String?, finalPath: String?) {
        self.fd = fd
        self.temporaryPath = temporaryPath
        self.finalPath = finalPath
    }

    static func standardOutput() -> OutputSink { OutputSink(fd: STDOUT_FILENO, temporaryPath: nil, finalPath: nil) }

    static func discard() -> OutputSink { OutputSink(fd: -1, temporaryPath: nil, finalPath: nil) }

    static func file(_ path: String) throws(RecordError) -> OutputSink {
        // A hidden name, so a run writing into one of its own input directories never reads it.
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(folder).\(name).partial-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw RecordError(.outputFailed, "\(path): \(String(cString: strerror(errno)))") }
        return OutputSink(fd: fd, temporaryPath: temporary, finalPath: path)
    }

    /// Writes all of `bytes`; returns the reason when it could not.
    func write(_ bytes: ByteBuffer) -> String? {
        guard fd >= 0 else { return nil }
        return Self.writeAll(fd: fd, bytes)
    }

    /// Closes the file and moves it into place (`keep`), or removes it.
    func finish(keep: Bool) -> String? {
        guard let temporaryPath, let finalPath else { return nil }
        var failure: String?
        if fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if keep, failure == nil {
            if rename(temporaryPath, finalPath) == 0 { return nil }
            failure = String(cString: strerror(errno))
        }
        unlink(temporaryPath)
        return failure.map { "\(finalPath): \($0)" }
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
