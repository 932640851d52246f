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

// MARK: - File names as given

/// The command line's arguments as the bytes the kernel passed.
///
/// `CommandLine.arguments` (and so ArgumentParser) replaces bytes that are not UTF-8 with U+FFFD:
/// a file named with such bytes would name no file, and two such names could read the same. The
/// raw `argv` still has the bytes; this finds the one each parsed argument came from.
enum RawArguments {
    /// The paths the parsed `arguments` were spelled with, in order. An argument without U+FFFD
    /// is exact UTF-8 already; one with it is matched, in order, to the next raw argument that
    /// decodes to the same text (positional arguments keep their order in `argv`).
    static func paths(_ arguments: [String]) -> [RawPath] {
        guard arguments.contains(where: { $0.unicodeScalars.contains("\u{FFFD}") }) else { return arguments.map(RawPath.init) }
        let raw = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
        }
        var next = 0
        return arguments.map { argument in
            guard argument.unicodeScalars.contains("\u{FFFD}") else { return RawPath(argument) }
            while next < raw.count {
                var candidate = raw[next][...]
                next += 1
                // `--out=VALUE` spells an option and its value in one argument.
                if candidate.starts(with: Array("--".utf8)), let equals = candidate.firstIndex(of: UInt8(ascii: "=")) {
                    candidate = candidate[(equals + 1)...]
                }
                if String(decoding: candidate, as: UTF8.self) == argument { return RawPath(bytes: Array(candidate)) }
            }
            return RawPath(argument)
        }
    }
}

// MARK: - Trimming

extension ByteBuffer {
    /// Drops spaces, tabs, CRs and LFs from both ends of the readable bytes (a file's trailing
    /// newline, say) without copying.
    mutating func trimASCIIWhitespace() {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        while let first = getInteger(at: readerIndex, as: UInt8.self), isSpace(first) { moveReaderIndex(forwardBy: 1) }
        while readableBytes > 0, let last = getInteger(at: writerIndex - 1, as: UInt8.self), isSpace(last) {
            moveWriterIndex(to: writerIndex - 1)
        }
    }
}

// MARK: - Writing output

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
