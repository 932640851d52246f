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
    static func open(path: String) throws(RecordError) -> FileByteSource {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RecordError(.unreadableInput, "\(path): \(String(cString: strerror(errno)))") }
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
