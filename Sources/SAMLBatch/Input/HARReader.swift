import SAMLEncoding

/// Streams the entries out of an HTTP Archive without loading the file: the scanner walks the
/// top-level object to `log.entries` and hands out one entry's bytes at a time; everything else
/// (pages, response bodies, base64 images) is skipped as it streams past.
final class HARReader {
    private let reader: StreamReader
    private let limit: Int
    private var entry: [UInt8] = []

    /// One entry of `log.entries`: its bytes (valid during the callback) or its size when it is
    /// over the record limit.
    enum Entry {
        case bytes(UnsafeRawBufferPointer)
        case tooLarge(length: Int)
    }

    init(reader: StreamReader, limit: Int) {
        self.reader = reader
        self.limit = limit
    }

    /// Calls `body` with each entry and its 1-based number; returns the number of entries.
    /// A syntax error in the file's structure is thrown with the number of the entry it broke.
    func forEachEntry(_ body: (Int, Entry) throws(RecordError) -> Void) throws(RecordError) -> Int {
        var count = 0
        try expect(UInt8(ascii: "{"), "the HAR file is not a JSON object")
        try members { key throws(RecordError) in
            guard key == "log" else { return false }
            try expect(UInt8(ascii: "{"), "log is not an object")
            try members { key throws(RecordError) in
                guard key == "entries" else { return false }
                try expect(UInt8(ascii: "["), "log.entries is not an array")
                try skipWhitespace()
                if try reader.peekByte() == UInt8(ascii: "]") {
                    _ = try reader.nextByte()
                    return true
                }
                while true {
                    count += 1
                    entry.removeAll(keepingCapacity: true)
                    let length = try copyValue(capture: true)
                    if length > limit {
                        try body(count, .tooLarge(length: length))
                    } else {
                        var failure: RecordError?
                        entry.withUnsafeBytes { bytes in
                            do throws(RecordError) {
                                try body(count, .bytes(bytes))
                            } catch {
                                failure = error
                            }
                        }
                        if let failure { throw failure }
                    }
                    try skipWhitespace()
                    switch try reader.nextByte() {
                    case UInt8(ascii: ","): continue
                    case UInt8(ascii: "]"): return true
                    default: throw failure("expected ',' or ']' after entry \(count)")
                    }
                }
            }
            return true
        }
        return count
    }

    // MARK: Streaming structure

    /// Walks the members of the object whose `{` was just read; `handle` returns `true` when it
    /// consumed the member's value, `false` to have it skipped. Keys are compared unescaped and
    /// may not repeat: a second `log` (or `entries`) would hand out entries that a JSON parser
    /// reading the same file never sees.
    private func members(_ handle: (String) throws(RecordError) -> Bool) throws(RecordError) {
        try skipWhitespace()
        if try reader.peekByte() == UInt8(ascii: "}") {
            _ = try reader.nextByte()
            return
        }
        var keys = JSONKeySet()
        while true {
            try skipWhitespace()
            let key = try readKey(into: &keys)
            try expect(UInt8(ascii: ":"), "expected ':' after a key")
            if try !handle(key) { _ = try copyValue(capture: false) }
            try skipWhitespace()
            switch try reader.nextByte() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw failure("expected ',' or '}' after a member")
            }
        }
    }

    /// Keys of the file's structure (top level, `log`) are short; a longer one is refused
    /// rather than held.
    private static let maximumKeyBytes = 1024

    /// Reads a key (its opening quote next) and adds it, unescaped, to `keys`.
    private func readKey(into keys: inout JSONKeySet) throws(RecordError) -> String {
        guard try reader.nextByte() == 0x22 else { throw failure("expected a key") }
        var raw: [UInt8] = [0x22]
        var escaped = false
        while let c = try reader.nextByte() {
            raw.append(c)
            if raw.count > Self.maximumKeyBytes + 2 { throw failure("a key longer than \(Self.maximumKeyBytes) bytes") }
            if escaped {
                escaped = false
            } else if c == 0x5C {
                escaped = true
            } else if c == 0x22 {
                var result: Result<ArraySlice<UInt8>, RecordError> = .success([])
                raw.withUnsafeBytes { text in
                    result = Result { () throws(RecordError) in try keys.insert(text, string: 0..<text.count, escaped: raw.contains(0x5C)) }
                }
                return String(decoding: try result.get(), as: UTF8.self)
            }
        }
        throw failure("the file ends inside a key")
    }

    /// Streams one value past, copying it into `entry` when `capture` (and while it is within
    /// the limit). Returns its length in bytes.
    private func copyValue(capture: Bool) throws(RecordError) -> Int {
        try skipWhitespace()
        var length = 0
        var depth = 0
        var copying = capture
        func take(_ count: Int) {
            if copying {
                if length + count > limit {
                    copying = false
                    entry.removeAll()
                } else {
                    entry.append(contentsOf: UnsafeRawBufferPointer(rebasing: reader.buffered[..<count]))
                }
            }
            length += count
            reader.consume(count)
        }
        while true {
            guard let c = try reader.peekByte() else { throw failure("the file ends inside a value") }
            switch c {
            case 0x22:
                try copyString(take)
                if depth == 0 { return length }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                take(1)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return length }
                depth -= 1
                take(1)
                if depth == 0 { return length }
            case _ where c == UInt8(ascii: ",") || c.isXMLWhitespace:
                if depth == 0 { return length }
                take(1)
            default:
                take(1)
            }
        }
    }

    /// Streams a string (opening quote first) through `take`, a buffered run at a time.
    private func copyString(_ take: (Int) -> Void) throws(RecordError) {
        take(1)
        var escaped = false
        while true {
            if reader.bufferedCount == 0, try !reader.fill() { throw failure("the file ends inside a string") }
            let run = reader.buffered
            var i = 0
            while i < run.count {
                let c = run[i]
                i += 1
                if escaped {
                    escaped = false
                } else if c == 0x5C {
                    escaped = true
                } else if c == 0x22 {
                    take(i)
                    return
                }
            }
            take(i)
        }
    }

    private func skipWhitespace() throws(RecordError) {
        while let c = try reader.peekByte(), c.isXMLWhitespace {
            _ = try reader.nextByte()
        }
    }

    private func expect(_ byte: UInt8, _ message: String) throws(RecordError) {
        try skipWhitespace()
        guard try reader.nextByte() == byte else { throw failure(message) }
    }

    private func failure(_ message: String) -> RecordError {
        RecordError(.invalidJSON, message)
    }
}
