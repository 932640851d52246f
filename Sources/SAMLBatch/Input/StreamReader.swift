#if canImport(Glibc)
import Glibc
#endif

/// A growable window over a ``ByteSource``: lines, whole documents and single bytes are read out
/// of it without copying, and consumed bytes are dropped by moving the window's start.
///
/// The window grows only as far as one record needs (a line, a HAR entry), so memory is bounded
/// by the largest record rather than the input's size.
final class StreamReader {
    private(set) var source: any ByteSource
    private var storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private(set) var atEnd = false

    init(source: any ByteSource, capacity: Int = 1 << 20) {
        self.source = source
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Starts over on another source, keeping the storage.
    func reset(source: any ByteSource) {
        self.source = source
        start = 0
        end = 0
        atEnd = false
    }

    /// The bytes read but not yet consumed; valid until the next call that reads.
    var buffered: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[start..<end]) }

    var bufferedCount: Int { end - start }

    /// Drops the first `count` buffered bytes.
    func consume(_ count: Int) {
        precondition(count <= end - start)
        start += count
    }

    /// Drops everything buffered.
    func consumeAll() {
        start = 0
        end = 0
    }

    /// Reads more bytes behind the buffered ones; returns `false` at the end of the input.
    @discardableResult
    func fill() throws(RecordError) -> Bool {
        if atEnd { return false }
        if start == end {
            start = 0
            end = 0
        } else if end == storage.count, start > 0 {
            memmove(storage.baseAddress!, storage.baseAddress! + start, end - start)
            end -= start
            start = 0
        }
        if end == storage.count {
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 16)
            grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: end)
            storage.deallocate()
            storage = grown
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[end...]))
        if n == 0 {
            atEnd = true
            return false
        }
        end += n
        return true
    }

    /// The outcome of ``nextLine(limit:)``.
    enum Line {
        /// A line without its `\n` (or `\r\n`); valid until the next read.
        case line(UnsafeRawBufferPointer)
        /// A line longer than the limit, skipped; `length` bytes were dropped.
        case tooLong(length: Int)
        case end
    }

    /// The next line. Lines longer than `limit` are skipped without being held in memory.
    func nextLine(limit: Int) throws(RecordError) -> Line {
        var scanned = 0
        // Bytes of an over-long line already thrown away.
        var dropped = 0
        while true {
            let from = start + scanned
            if from < end, let hit = memchr(storage.baseAddress! + from, 0x0A, end - from) {
                let newline = hit - UnsafeMutableRawPointer(storage.baseAddress!)
                let length = dropped + newline - start
                if length > limit {
                    start = newline + 1
                    return .tooLong(length: length)
                }
                var lineEnd = newline
                if lineEnd > start, storage[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                let line = UnsafeRawBufferPointer(rebasing: storage[start..<lineEnd])
                start = newline + 1
                return .line(line)
            }
            scanned = end - start
            if scanned > limit {
                // Too long already: keep only the count, not the bytes.
                dropped += scanned
                consumeAll()
                scanned = 0
            }
            if try !fill() {
                let length = dropped + end - start
                if length > limit {
                    consumeAll()
                    return .tooLong(length: length)
                }
                if start == end { return dropped > 0 ? .tooLong(length: length) : .end }
                let line = UnsafeRawBufferPointer(rebasing: storage[start..<end])
                start = end
                return .line(line)
            }
        }
    }

    /// Buffers the rest of the input, up to `limit` bytes. Returns `nil` (and drains the input)
    /// when it is longer, with the total length seen.
    func readToEnd(limit: Int) throws(RecordError) -> Result<UnsafeRawBufferPointer, RecordTooLarge> {
        while end - start <= limit, try fill() {}
        if end - start > limit {
            var total = end - start
            consumeAll()
            while try fill() {
                total += end - start
                consumeAll()
            }
            return .failure(RecordTooLarge(length: total))
        }
        return .success(buffered)
    }

    /// The length of an input skipped for being over the record limit.
    struct RecordTooLarge: Error {
        var length: Int
    }

    // MARK: Single bytes, for the HAR scanner.

    /// The next byte without consuming it; `nil` at the end of the input.
    @inline(__always)
    func peekByte() throws(RecordError) -> UInt8? {
        if start == end, try !fill() { return nil }
        return storage[start]
    }

    /// Consumes and returns the next byte; `nil` at the end of the input.
    @inline(__always)
    func nextByte() throws(RecordError) -> UInt8? {
        if start == end, try !fill() { return nil }
        let byte = storage[start]
        start += 1
        return byte
    }
}
