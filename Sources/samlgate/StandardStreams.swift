import NIOCore
import SAMLEncoding
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Writes to standard output and error with `write(2)`, straight from byte buffers (no stdio
/// buffering to flush, nothing shared between threads).
enum StandardStreams {
    static func write(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { writeAll(STDOUT_FILENO, $0) }
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(STDOUT_FILENO, UnsafeRawBufferPointer($0)) }
    }

    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(STDERR_FILENO, UnsafeRawBufferPointer($0)) }
    }

    /// Reports one failed input the way every verb does: `samlgate: <file>: <code>: <message>`,
    /// the message escaped (it may quote the input).
    static func reportFailure(input: String, code: ErrorCode, message: String) {
        writeError("samlgate: \(input): \(code): \(DisplayText.escape(message))\n")
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(fd, base, left)
            if n < 0 {
                if errno == EINTR { continue }
                return  // a closed pipe: nothing sensible left to do with the output
            }
            base += n
            left -= n
        }
    }
}
