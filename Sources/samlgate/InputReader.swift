import NIOCore
import SAMLBatch
import SAMLEncoding
import SAMLVerification
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole input file (or standard input for `-`) into one `ByteBuffer`, with plain POSIX
/// calls: the file is sized once and read straight into the buffer's storage.
enum InputReader {
    /// The error for an input that cannot be read (code `unreadable_input`) or is over the
    /// caller's limit (code `too_large`).
    struct Failure: Error {
        var code: ErrorCode = .unreadableInput
        var message: String
    }

    static let standardInputName = "-"

    /// Reads `path`, opened with its bytes (see ``RawPath``). With a `limit`, an input longer
    /// than `limit` bytes fails with `too_large` after at most `limit + 1` bytes were read, so a
    /// huge file or an endless pipe costs no more memory than an acceptable one.
    static func read(_ path: RawPath, limit: Int? = nil) throws(Failure) -> ByteBuffer {
        let limit = limit ?? Int.max - 1
        if path.bytes == Array(standardInputName.utf8) {
            return try readAll(fd: STDIN_FILENO, sizeHint: min(64 * 1024, limit + 1), limit: limit)
        }
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw Failure(message: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(message: String(cString: strerror(errno))) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw Failure(message: "is a directory") }
        if Int(info.st_size) > limit { throw tooLarge(limit) }
        return try readAll(fd: fd, sizeHint: min(Int(info.st_size), limit) + 1, limit: limit)
    }

    private static func tooLarge(_ limit: Int) -> Failure {
        Failure(code: .tooLarge, message: "input larger than \(limit) bytes")
    }

    /// Reads to end of file; invariant: the buffer never holds more than `limit + 1` bytes.
    private static func readAll(fd: Int32, sizeHint: Int, limit: Int) throws(Failure) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: max(sizeHint, 1))
        while true {
            if buffer.readableBytes > limit { throw tooLarge(limit) }
            if buffer.writableBytes == 0 { buffer.reserveCapacity(minimumWritableBytes: buffer.capacity) }
            let room = limit + 1 - buffer.readableBytes
            var readError: Int32 = 0
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { space in
                let r = Glibc.read(fd, space.baseAddress, min(space.count, room))
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
