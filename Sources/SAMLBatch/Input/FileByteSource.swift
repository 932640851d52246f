import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

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
