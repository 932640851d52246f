// Byte-level JSON syntax for the batch readers: scanning, validating and unescaping values, and
// the keys of an object, which may not repeat.

import SAMLEncoding

#if canImport(Glibc)
import Glibc
#endif

/// Byte-level JSON scanning over one buffered text (a JSON Lines record or a HAR entry): skip
/// whitespace, find the end of a value (validating it), and unescape a string into a caller's
/// region. No `String` is built on the way, so the response field of a record is copied once.
enum JSONSyntax {
    /// Nesting deeper than this is refused rather than recursed into.
    static let maximumDepth = 64

    static func error(_ what: String, at offset: Int) -> RecordError {
        RecordError(.invalidJSON, "\(what) at byte \(offset)")
    }

    @inline(__always)
    static func skipWhitespace(_ text: UnsafeRawBufferPointer, _ i: inout Int) {
        while i < text.count {
            guard text[i].isXMLWhitespace else { return }  // JSON's whitespace is XML's four bytes
            i += 1
        }
    }

    /// `text[i]` is a string's opening quote; returns the offset just past its closing quote and
    /// whether it contains escapes.
    static func endOfString(_ text: UnsafeRawBufferPointer, from i: Int) throws(RecordError) -> (end: Int, escaped: Bool) {
        let base = text.baseAddress!
        var j = i + 1
        var escaped = false
        while j < text.count {
            // Jump to the next quote; a backslash before it means the slow walk.
            guard let hit = memchr(base + j, 0x22, text.count - j) else { break }
            let quote = UnsafeRawPointer(hit) - base
            if memchr(base + j, 0x5C, quote - j) == nil { return (quote + 1, escaped) }
            escaped = true
            while j < quote {
                if text[j] == 0x5C { j += 2 } else { j += 1 }
            }
            // `j` is past the quote if the quote itself was escaped; otherwise it is the quote.
            if j == quote { return (quote + 1, true) }
        }
        throw error("unterminated string", at: i)
    }

    /// Unescapes the string whose quotes are at `range.lowerBound - 1` and `range.upperBound`
    /// into `output` (at least `range.count` bytes); returns the bytes written.
    static func unescape(_ text: UnsafeRawBufferPointer, _ range: Range<Int>, into output: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
        var o = 0
        var i = range.lowerBound
        while i < range.upperBound {
            let c = text[i]
            if c != 0x5C {
                output[o] = c
                o += 1
                i += 1
                continue
            }
            guard i + 1 < range.upperBound else { throw error("broken escape", at: i) }
            let e = text[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output[o] = e
            case UInt8(ascii: "b"): output[o] = 0x08
            case UInt8(ascii: "f"): output[o] = 0x0C
            case UInt8(ascii: "n"): output[o] = 0x0A
            case UInt8(ascii: "r"): output[o] = 0x0D
            case UInt8(ascii: "t"): output[o] = 0x09
            case UInt8(ascii: "u"):
                var scalar = try hex4(text, i, limit: range.upperBound)
                i += 4
                if (0xD800..<0xDC00).contains(scalar), i + 6 <= range.upperBound, text[i] == 0x5C, text[i + 1] == UInt8(ascii: "u") {
                    let low = try hex4(text, i + 2, limit: range.upperBound)
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                // A lone surrogate (seen in captured response bodies) becomes U+FFFD.
                if (0xD800..<0xE000).contains(scalar) { scalar = 0xFFFD }
                o += writeUTF8(scalar, into: output, at: o)
                continue
            default:
                throw error("unknown escape", at: i - 2)
            }
            o += 1
        }
        return o
    }

    private static func hex4(_ text: UnsafeRawBufferPointer, _ i: Int, limit: Int) throws(RecordError) -> UInt32 {
        guard i + 4 <= limit else { throw error("short \\u escape", at: i - 2) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let digit: UInt32
            switch text[i + k] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(text[i + k] - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(text[i + k] - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(text[i + k] - UInt8(ascii: "A") + 10)
            default: throw error("bad \\u escape", at: i - 2)
            }
            value = value << 4 | digit
        }
        return value
    }

    private static func writeUTF8(_ scalar: UInt32, into output: UnsafeMutableRawBufferPointer, at o: Int) -> Int {
        switch scalar {
        case 0..<0x80:
            output[o] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            output[o] = UInt8(0xC0 | scalar >> 6)
            output[o + 1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            output[o] = UInt8(0xE0 | scalar >> 12)
            output[o + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            output[o + 2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            output[o] = UInt8(0xF0 | scalar >> 18)
            output[o + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            output[o + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            output[o + 3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }

    /// Returns the offset just past the value starting at `i` (after whitespace), checking its
    /// syntax, so that a value copied verbatim into the output is valid JSON.
    static func endOfValue(_ text: UnsafeRawBufferPointer, from start: Int, depth: Int = 0) throws(RecordError) -> Int {
        var i = start
        skipWhitespace(text, &i)
        guard i < text.count else { throw error("missing value", at: i) }
        switch text[i] {
        case UInt8(ascii: "\""):
            let end = try endOfString(text, from: i).end
            try validateString(text, i..<end)
            return end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < maximumDepth else { throw error("nesting too deep", at: i) }
            let isObject = text[i] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            i += 1
            skipWhitespace(text, &i)
            if i < text.count, text[i] == close { return i + 1 }
            // Carried values are copied verbatim: an object in one must not repeat a key either.
            var keys = JSONKeySet()
            while true {
                if isObject {
                    skipWhitespace(text, &i)
                    guard i < text.count, text[i] == 0x22 else { throw error("expected a key", at: i) }
                    let keyStart = i
                    let (keyEnd, escaped) = try endOfString(text, from: i)
                    try keys.insert(text, string: keyStart..<keyEnd, escaped: escaped)
                    i = keyEnd
                    skipWhitespace(text, &i)
                    guard i < text.count, text[i] == UInt8(ascii: ":") else { throw error("expected ':'", at: i) }
                    i += 1
                }
                i = try endOfValue(text, from: i, depth: depth + 1)
                skipWhitespace(text, &i)
                guard i < text.count else { throw error("unterminated \(isObject ? "object" : "array")", at: i) }
                if text[i] == close { return i + 1 }
                guard text[i] == UInt8(ascii: ",") else { throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'", at: i) }
                i += 1
            }
        case UInt8(ascii: "t"): return try literal("true", text, i)
        case UInt8(ascii: "f"): return try literal("false", text, i)
        case UInt8(ascii: "n"): return try literal("null", text, i)
        default:
            return try endOfNumber(text, from: i)
        }
    }

    /// Checks a string (quotes included in `range`) that is copied verbatim into the output:
    /// no raw control characters, only the escapes RFC 8259 allows.
    static func validateString(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) throws(RecordError) {
        var i = range.lowerBound + 1
        let end = range.upperBound - 1
        while i < end {
            let c = text[i]
            if c < 0x20 { throw error("a control character inside a string", at: i) }
            if c == 0x5C {
                guard i + 1 < end else { throw error("broken escape", at: i) }
                switch text[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 2
                case UInt8(ascii: "u"):
                    // Surrogates only in pairs (I-JSON): strict parsers refuse lone ones.
                    let unit = try hex4(text, i + 2, limit: end)
                    i += 6
                    if (0xDC00..<0xE000).contains(unit) { throw error("a lone surrogate escape", at: i - 6) }
                    if (0xD800..<0xDC00).contains(unit) {
                        guard i + 6 <= end, text[i] == 0x5C, text[i + 1] == UInt8(ascii: "u"),
                            (0xDC00..<0xE000).contains(try hex4(text, i + 2, limit: end))
                        else { throw error("a lone surrogate escape", at: i - 6) }
                        i += 6
                    }
                default:
                    throw error("unknown escape", at: i)
                }
                continue
            }
            i += 1
        }
    }

    private static func literal(_ word: StaticString, _ text: UnsafeRawBufferPointer, _ i: Int) throws(RecordError) -> Int {
        let count = word.utf8CodeUnitCount
        guard i + count <= text.count, memcmp(text.baseAddress! + i, word.utf8Start, count) == 0 else {
            throw error("unexpected token", at: i)
        }
        return i + count
    }

    /// `-? int frac? exp?` as RFC 8259 has it.
    private static func endOfNumber(_ text: UnsafeRawBufferPointer, from start: Int) throws(RecordError) -> Int {
        var i = start
        func digits() -> Int {
            let first = i
            while i < text.count, text[i] >= 0x30, text[i] <= 0x39 { i += 1 }
            return i - first
        }
        if i < text.count, text[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        let intDigits = digits()
        guard intDigits > 0, !(intDigits > 1 && text[intStart] == 0x30) else { throw error("unexpected token", at: start) }
        if i < text.count, text[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw error("bad number", at: start) }
        }
        if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
            i += 1
            if i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw error("bad number", at: start) }
        }
        return i
    }

    /// A JSON string (quotes included in `range`) as a Swift string.
    static func string(_ text: UnsafeRawBufferPointer, _ range: Range<Int>) throws(RecordError) -> String {
        let content = (range.lowerBound + 1)..<(range.upperBound - 1)
        var bytes = [UInt8](repeating: 0, count: content.count)
        var result: Result<Int, RecordError> = .success(0)
        bytes.withUnsafeMutableBytes { region in
            result = Result { () throws(RecordError) in try JSONSyntax.unescape(text, content, into: region) }
        }
        return String(decoding: bytes[..<(try result.get())], as: UTF8.self)
    }
}

// MARK: - Object keys

/// The keys of one JSON object as every parser reads them (after unescaping), to refuse an
/// object that repeats one.
///
/// Parsers disagree on a repeated key: Foundation keeps the first copy, Python, Go and
/// JavaScript the last. A record holding `"mvpd":"A"` and `"mvp\u0064":"B"` would be verified
/// with A's trust by a tool comparing raw bytes while everything reading its `meta` sees B. So
/// keys are compared as unescaped bytes, ASCII letters in any case (Go's `encoding/json` and
/// ASP.NET Core bind `mvpd` and `MVPD` alike), and a repeated key is a `duplicate_key` error
/// (the rule ``StrictJSON`` applies to the gateway's partner status, on the batch tool's own
/// scanner).
///
/// Cost stays linear: a record's few keys are compared directly; from the seventeenth on a hash
/// set takes over. The storage is kept between objects.
struct JSONKeySet {
    private var storage: [UInt8] = []
    private var ranges: [Range<Int>] = []
    private var hashed: Set<[UInt8]>?
    private static let directLimit = 16

    init() {}

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        hashed = nil
    }

    /// Adds the key whose string, quotes included, is `text[string]` and returns it unescaped
    /// (valid until the next call). `escaped`: whether the string holds a backslash.
    ///
    /// - Throws: `invalid_json` for a string that is not valid JSON (a lone surrogate escape,
    ///   say), `duplicate_key` when the object already has this key.
    @discardableResult
    mutating func insert(_ text: UnsafeRawBufferPointer, string: Range<Int>, escaped: Bool) throws(RecordError) -> ArraySlice<UInt8> {
        try JSONSyntax.validateString(text, string)
        let start = storage.count
        let content = (string.lowerBound + 1)..<(string.upperBound - 1)
        if escaped {
            storage.append(contentsOf: repeatElement(0, count: content.count))
            var result: Result<Int, RecordError> = .success(0)
            storage.withUnsafeMutableBytes { region in
                let tail = UnsafeMutableRawBufferPointer(rebasing: region[start...])
                result = Result { () throws(RecordError) in try JSONSyntax.unescape(text, content, into: tail) }
            }
            storage.removeSubrange((start + (try result.get()))...)
        } else {
            storage.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[content]))
        }
        let key = storage[start...]
        if hashed != nil {
            guard hashed!.insert(Self.folded(key)).inserted else { throw Self.duplicate(at: string.lowerBound) }
        } else {
            for range in ranges where storage[range].elementsEqual(key, by: { Self.fold($0) == Self.fold($1) }) {
                throw Self.duplicate(at: string.lowerBound)
            }
            if ranges.count == Self.directLimit {
                hashed = Set(ranges.map { Self.folded(storage[$0]) } + [Self.folded(key)])
            }
        }
        ranges.append(start..<storage.count)
        return key
    }

    private static func duplicate(at offset: Int) -> RecordError {
        RecordError(.duplicateKey, "an object repeats a key at byte \(offset) (also when one copy is spelled with escapes or in other case)")
    }

    /// A key byte as binders that ignore case compare it: ASCII letters lower-cased.
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func folded(_ key: ArraySlice<UInt8>) -> [UInt8] { key.map(fold) }
}
