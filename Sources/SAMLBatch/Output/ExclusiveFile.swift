import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// An output file written under a fresh temporary name beside its final path and renamed over
/// it when complete, so that nobody can make the batch tool write where it was not told to.
///
/// Output often goes to shared directories. A predictable temporary name, or an open that
/// follows links, lets another user plant a symbolic link there and have samlgate overwrite any
/// file it can write. So the temporary name is hidden and carries 64 random bits, and it is
/// created with `O_CREAT | O_EXCL | O_NOFOLLOW`: the open fails rather than reuse anything that
/// exists under that name, link or not. `rename(2)` then replaces whatever is at the final path
/// (a planted link included) instead of writing through it. An interrupted run leaves at most
/// the hidden temporary file, never a half-written file under the final name.
struct ExclusiveFile {
    let fd: Int32
    let temporaryPath: RawPath
    let finalPath: RawPath

    /// Creates the temporary file for `finalPath`; the error says why it could not be.
    static func create(_ finalPath: RawPath) throws(RecordError) -> ExclusiveFile {
        let slash = finalPath.bytes.lastIndex(of: UInt8(ascii: "/"))
        let folder = slash.map { Array(finalPath.bytes[...$0]) } ?? []
        var generator = SystemRandomNumberGenerator()
        var failure = EEXIST
        // A name taken by chance (or planted) is skipped for another random one.
        for _ in 0..<8 where failure == EEXIST {
            let suffix = String(generator.next() as UInt64, radix: 16)
            let temporary = RawPath(bytes: folder + [UInt8(ascii: ".")] + finalPath.lastComponent + Array(".partial-\(suffix)".utf8))
            let fd = temporary.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            if fd >= 0 { return ExclusiveFile(fd: fd, temporaryPath: temporary, finalPath: finalPath) }
            failure = errno
        }
        throw RecordError(.outputFailed, "\(finalPath): \(String(cString: strerror(failure)))")
    }

    /// Closes the file, then renames it into place (`keep`) or removes it; returns the reason
    /// when the file could not be kept. `sync` flushes it to the disk first (one output file
    /// of a run, not each of a million small ones).
    func finish(keep: Bool, sync: Bool) -> String? {
        var failure: String?
        if keep, sync, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        if keep, failure == nil {
            if temporaryPath.withCString({ from in finalPath.withCString { rename(from, $0) } }) == 0 { return nil }
            failure = String(cString: strerror(errno))
        }
        _ = temporaryPath.withCString { unlink($0) }
        return failure.map { "\(finalPath): \($0)" }
    }
}
