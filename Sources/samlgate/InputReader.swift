import NIOCore
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole input file (or standard input for `-`) into one `ByteBuffer`, with plain POSIX
/// calls: the file is sized once and read straight into the buffer's storage.
enum InputReader {
    /// The error for an input that cannot be read; code `unreadable_input`.
    struct Failure: Error {
        static let code = "unreadable_input"
        var message: String
    }

    static let standardInputName = "-"

    /// Reads `path`, opened with its bytes (see ``RawPath``).
    static func read(_ path: RawPath) throws(Failure) -> ByteBuffer {
        if path.bytes == Array(standardInputName.utf8) { return try readAll(fd: STDIN_FILENO, sizeHint: 64 * 1024) }
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw Failure(message: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(message: String(cString: strerror(errno))) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw Failure(message: "is a directory") }
        return try readAll(fd: fd, sizeHint: Int(info.st_size) + 1)
    }

    private static func readAll(fd: Int32, sizeHint: Int) throws(Failure) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: max(sizeHint, 1))
        while true {
            if buffer.writableBytes == 0 { buffer.reserveCapacity(minimumWritableBytes: buffer.capacity) }
            var readError: Int32 = 0
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { space in
                let r = Glibc.read(fd, space.baseAddress, space.count)
                if r < 0 {
                    readError = errno
                    return 0
                }
                return r
            }
            if readError == EINTR { continue }
            if readError != 0 { throw Failure(message: String(cString: strerror(readError))) }
            if n == 0 { return buffer }
        }
    }
}
