// Where a batch input's bytes come from: the protocol, files and standard input, bytes in memory.

import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where a batch input's bytes come from: a file, standard input, or a decompressor over one of
/// those. Reads go straight into the caller's buffer.
protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes; returns 0 only at the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int
    /// Bytes taken from the underlying file so far (compressed bytes for gzip), for progress.
    var consumedBytes: Int { get }
}

// MARK: - Files and standard input

/// Reads a file descriptor with `read(2)`; closes it when done unless it is standard input.
final class FileByteSource: ByteSource {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private(set) var consumedBytes = 0

    init(fd: Int32, ownsDescriptor: Bool) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
    }

    /// Opens `path` for reading; the message says why it cannot be.
    ///
    /// `regularOnly` (files found in a directory): the file must still be a regular file once
    /// open. The walk saw one, but an entry swapped for a FIFO in between would block the run
    /// forever, so the open does not wait (`O_NONBLOCK`, which regular files ignore, so it stays
    /// set) and the type is checked on the descriptor itself; `skipped_input` when it is not one.
    static func open(path: RawPath, regularOnly: Bool = false) throws(RecordError) -> FileByteSource {
        let fd = path.withCString { Glibc.open($0, O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0)) }
        guard fd >= 0 else { throw RecordError(.unreadableInput, String(cString: strerror(errno))) }
        if regularOnly {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                Glibc.close(fd)
                throw RecordError(.skippedInput, "not a regular file any more when opened (not read)")
            }
        }
        return FileByteSource(fd: fd, ownsDescriptor: true)
    }

    deinit {
        if ownsDescriptor { Glibc.close(fd) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 {
                consumedBytes += n
                return n
            }
            if errno == EINTR { continue }
            throw RecordError(.unreadableInput, "read failed: \(String(cString: strerror(errno)))")
        }
    }
}

// MARK: - Bytes in memory

/// A ``ByteSource`` over bytes already in memory, handed out at most `window` bytes per read so
/// that readers meet the same buffer boundaries as with a file. Used by ``BatchReaderFuzzing``.
final class MemoryByteSource: ByteSource {
    private let bytes: UnsafeRawBufferPointer
    private let window: Int
    private(set) var consumedBytes = 0

    init(_ bytes: UnsafeRawBufferPointer, window: Int) {
        self.bytes = bytes
        self.window = max(window, 1)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
        let count = min(buffer.count, window, bytes.count - consumedBytes)
        guard count > 0, let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
        target.copyMemory(from: source + consumedBytes, byteCount: count)
        consumedBytes += count
        return count
    }
}
