// Where output goes: the records' stream (standard output, a file, nowhere), the files written
// whole under a temporary name, and the one file per record of `--out DIR`.

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

// MARK: - Files written whole, under a temporary name

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

// MARK: - `--out DIR`

/// `--out DIR`: writes one record's encoded value to `DIR/<index>-<source>.encoded`. The
/// zero-padded record index keeps names unique and sorted in input order; the source (with `/`
/// made `_`) says where the value came from.
enum EncodedFileWriter {
    static func fileName(for record: BatchRecord) -> String {
        let index = String(record.index + 1)
        let padded = String(repeating: "0", count: max(0, 8 - index.count)) + index
        var source = String(record.source.description.map { $0 == "/" ? "_" : $0 })
        // File names are limited to 255 bytes: keep the end of the source within 200 bytes.
        // One cut of whole characters (removing one at a time would be quadratic in the length).
        let excess = source.utf8.count - 200
        var dropped = 0, characters = 0
        for character in source where dropped < excess {
            dropped += character.utf8.count
            characters += 1
        }
        source.removeFirst(characters)
        return "\(padded)-\(source).encoded"
    }

    /// Writes the file of a record that encoded (with `--verify`, only of one that also
    /// verified): its encoded value, whole. Returns the encoded length, counted also for a record
    /// that did not verify and gets no file.
    static func write(_ outcome: RecordOutcome, of record: BatchRecord, directory: RawPath) throws(RecordError) -> Int {
        guard case .encoded(_, let value, _, let error) = outcome else { return 0 }
        if error == nil { try write(value, directory: directory, record: record) }
        return value.readableBytes
    }

    /// Writes the file through an ``ExclusiveFile``: the names are predictable, so a link or
    /// file planted under one in a shared directory is replaced, never written through.
    private static func write(_ bytes: ByteBuffer, directory: RawPath, record: BatchRecord) throws(RecordError) {
        let file = try ExclusiveFile.create(directory.appending(Array(fileName(for: record).utf8)))
        if let failure = OutputSink.writeAll(fd: file.fd, bytes) {
            _ = file.finish(keep: false, sync: false)
            throw RecordError(.outputFailed, "\(file.finalPath): \(failure)")
        }
        if let failure = file.finish(keep: true, sync: false) { throw RecordError(.outputFailed, failure) }
    }
}
