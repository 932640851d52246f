/// Stage 1–3 of the cookbook on UTF-8 bytes: collapse `[ \t]+` to one space, delete the seven
/// newline scalars, trim `whitespacesAndNewlines` at both ends.
///
/// The order matters and is kept: runs are collapsed *before* newlines are deleted, so the spaces
/// on both sides of a newline stay two spaces (`"a \n b"` → `"a  b"`). Input must be valid UTF-8
/// (see ``UTF8Validator``); the output is never longer than the input, so the output may be the
/// input itself (in-place compaction).
public enum WhitespaceNormalizer {
    /// Normalizes `input` into `output` and returns the number of bytes written.
    ///
    /// - Precondition: `output.count >= input.count`; `input` is valid UTF-8 (ill-formed bytes are
    ///   copied through unchanged). `output` may start at the same address as `input` (in place),
    ///   but must not otherwise overlap it.
    public static func normalize(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> Int {
        let result = run(input, into: output, validating: false)
        return result < 0 ? 0 : result
    }

    /// Validates and normalizes in one pass: the fused path's first half.
    ///
    /// - Throws: `invalid_utf8` with the offset of the first ill-formed sequence.
    /// - Precondition: as ``normalize(_:into:)``.
    public static func normalizeValidating(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> Int {
        let result = run(input, into: output, validating: true)
        if result < 0 { throw CookbookEncoder.invalidUTF8(at: -1 - result, in: input) }
        return result
    }

    /// The normalization of a document decoded from a value that arrived in `form`: `nil` when the
    /// value arrived base64 or encoded and the document is valid UTF-8 and already a result of the
    /// cookbook's normalization — it is kept byte for byte —, otherwise the count written to
    /// `output` by ``normalizeValidating(_:into:)``. Raw XML is always normalized.
    ///
    /// The normalization is not idempotent (`"a \n b"` → `"a  b"` → `"a b"`), so normalizing a
    /// value the cookbook already produced could change it again. What the cookbook produces is
    /// exactly a document with no tab, none of the seven newline scalars and nothing trimmable at
    /// either end (``isNormalizationResult(_:)``); only such a document is kept.
    ///
    /// - Throws: `invalid_utf8` with the offset of the first ill-formed sequence.
    /// - Precondition: as ``normalize(_:into:)``.
    public static func normalizeValidating(
        _ input: UnsafeRawBufferPointer, decodedFrom form: SAMLForm, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> Int? {
        if try keepsValidating(input, decodedFrom: form) { return nil }
        return try normalizeValidating(input, into: output)
    }

    /// Whether ``normalizeValidating(_:decodedFrom:into:)`` keeps a document decoded from a value
    /// that arrived in `form` byte for byte (it arrived base64 or encoded, and is a normalization
    /// result), validating its UTF-8 then: lets a caller that keeps the normalization in memory of
    /// its own allocate that memory only when normalization writes.
    ///
    /// - Throws: `invalid_utf8` with the offset of the first ill-formed sequence, when kept.
    public static func keepsValidating(_ input: UnsafeRawBufferPointer, decodedFrom form: SAMLForm) throws(SAMLEncodingError) -> Bool {
        guard form != .raw, isNormalizationResult(input) else { return false }
        if let offset = UTF8Validator.firstInvalidOffset(in: input) {
            throw CookbookEncoder.invalidUTF8(at: offset, in: input)
        }
        return true
    }

    /// Whether the cookbook's normalization can produce `input` — it has no tab, none of the
    /// seven newline scalars and nothing trimmable at either end — so some input normalizes to it.
    /// Runs of spaces may be longer than one (a newline between two spaces leaves two).
    public static func isNormalizationResult(_ input: UnsafeRawBufferPointer) -> Bool {
        guard let src = input.baseAddress else { return true }
        let count = input.count
        guard CookbookWhitespace.trimmedRange(src, count: count) == 0..<count else { return false }
        var i = 0
        while i < count {
            if i + 8 <= count {
                // Eight bytes at once when none is below 0x0E and none is non-ASCII.
                let word = UInt64(littleEndian: src.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let below = (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word & 0x8080_8080_8080_8080
                if below | (word & 0x8080_8080_8080_8080) == 0 {
                    i += 8
                    continue
                }
            }
            let b = src.load(fromByteOffset: i, as: UInt8.self)
            if (0x09...0x0D).contains(b) || isNewline(src, at: i, end: count) { return false }
            i += 1
        }
        return true
    }

    /// Trims, then runs the interior pass; a negative result `-1 - k` means ill-formed UTF-8 at `k`.
    @inline(__always)
    static func run(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, validating: Bool) -> Int {
        precondition(output.count >= input.count, "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        // Ends are trimmed first: a trimmed scalar is always a complete, valid sequence, so
        // validating only the interior still finds the first ill-formed byte.
        let range = CookbookWhitespace.trimmedRange(src, count: input.count)
        let overlapping = UnsafeRawPointer(dst) + output.count > src && UnsafeRawPointer(dst) < src + input.count
        return overlapping
            ? normalizeInterior(src, range.lowerBound, range.upperBound, into: dst, inPlace: true, validating: validating)
            : normalizeInterior(src, range.lowerBound, range.upperBound, into: dst, inPlace: false, validating: validating)
    }

    /// The interior pass over `src[start..<end]` (already trimmed) into `dst`.
    ///
    /// Invariant: `o <= i - start` at the top of each iteration (the output never overtakes the
    /// input), which is what makes in-place use safe: a byte is always read before its position
    /// can be written.
    @inline(__always)
    static func normalizeInterior(
        _ src: UnsafeRawPointer, _ start: Int, _ end: Int, into dst: UnsafeMutableRawPointer,
        inPlace: Bool, validating: Bool
    ) -> Int {
        var i = start
        var o = 0
        while i < end {
            // Fast path: eight bytes that are all printable ASCII (0x21…0x7F) are copied as one word.
            if i + 8 <= end {
                let word = UInt64(littleEndian: src.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                // High bit of a byte is set when it is >= 0x80, or (for the lowest such byte, which
                // is all we use) when it is < 0x21 and the subtraction borrowed.
                let special = ((word &- 0x2121_2121_2121_2121) | word) & 0x8080_8080_8080_8080
                let clean = special.trailingZeroBitCount >> 3
                if !inPlace || special == 0 {
                    // Out of place the whole word can be stored even when only `clean` bytes count.
                    dst.storeBytes(of: word.littleEndian, toByteOffset: o, as: UInt64.self)
                } else {
                    // In place, a wide store could overwrite unread input: copy byte by byte.
                    copyForward(src, i, into: dst, o, count: clean)
                }
                i += clean
                o += clean
                if special == 0 { continue }
            }
            let b = src.load(fromByteOffset: i, as: UInt8.self)
            switch b {
            case 0x20, 0x09:
                // A run of spaces and tabs becomes one space; a newline ends the run.
                dst.storeBytes(of: 0x20, toByteOffset: o, as: UInt8.self)
                o += 1
                i += 1
                while i < end {
                    let c = src.load(fromByteOffset: i, as: UInt8.self)
                    guard c == 0x20 || c == 0x09 else { break }
                    i += 1
                }
            case 0x0A...0x0D:
                i += 1
            case 0x80...:
                let n = validating ? UTF8Validator.sequenceLength(src, at: i, lead: b, count: end) : 1
                if n == 0 { return -1 - i }
                // U+0085 (C2 85), U+2028 and U+2029 (E2 80 A8/A9) are newlines: deleted.
                if isNewline(src, at: i, end: end) {
                    i += b == 0xC2 ? 2 : 3
                    continue
                }
                copyForward(src, i, into: dst, o, count: n)
                i += n
                o += n
            default:
                dst.storeBytes(of: b, toByteOffset: o, as: UInt8.self)
                o += 1
                i += 1
            }
        }
        return o
    }

    /// Copies `count` bytes one at a time, front to back: safe when `dst + o <= src + i` overlap.
    @inline(__always)
    static func copyForward(_ src: UnsafeRawPointer, _ i: Int, into dst: UnsafeMutableRawPointer, _ o: Int, count: Int) {
        var k = 0
        while k < count {
            dst.storeBytes(of: src.load(fromByteOffset: i + k, as: UInt8.self), toByteOffset: o + k, as: UInt8.self)
            k += 1
        }
    }

    /// Whether a multi-byte newline (U+0085, U+2028, U+2029) starts at `i`.
    @inline(__always)
    static func isNewline(_ src: UnsafeRawPointer, at i: Int, end: Int) -> Bool {
        let b = src.load(fromByteOffset: i, as: UInt8.self)
        if b == 0xC2 { return i + 1 < end && src.load(fromByteOffset: i + 1, as: UInt8.self) == 0x85 }
        if b == 0xE2 {
            return i + 2 < end && src.load(fromByteOffset: i + 1, as: UInt8.self) == 0x80
                && src.load(fromByteOffset: i + 2, as: UInt8.self) & 0xFE == 0xA8
        }
        return false
    }
}

// MARK: - The cookbook's character classes

/// The cookbook's character classes, on UTF-8 bytes.
///
/// `trimmable` is Foundation's `CharacterSet.whitespacesAndNewlines` on Linux: exactly 26 scalars
/// (U+0009–U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000–U+200B, U+2028, U+2029, U+202F,
/// U+205F, U+3000). Every scalar the earlier cookbook steps touch (space, tab and the seven
/// newlines) is in it, so the trimmed ends of the final string are exactly the maximal runs of
/// these scalars at the ends of the original input. All functions assume valid UTF-8.
enum CookbookWhitespace {
    /// Length of the trimmable scalar starting at `i`, or 0 when the scalar there is content.
    @inline(__always)
    static func trimmableLength(_ base: UnsafeRawPointer, at i: Int, end: Int) -> Int {
        let b0 = base.load(fromByteOffset: i, as: UInt8.self)
        switch b0 {
        case 0x09...0x0D, 0x20:
            return 1
        case 0xC2:
            guard i + 1 < end else { return 0 }
            let b1 = base.load(fromByteOffset: i + 1, as: UInt8.self)
            return b1 == 0x85 || b1 == 0xA0 ? 2 : 0
        case 0xE1, 0xE2, 0xE3:
            guard i + 2 < end else { return 0 }
            let b1 = base.load(fromByteOffset: i + 1, as: UInt8.self)
            let b2 = base.load(fromByteOffset: i + 2, as: UInt8.self)
            return isTrimmable3(b0, b1, b2) ? 3 : 0
        default:
            return 0
        }
    }

    /// Length of the trimmable scalar that ends just before `end`, or 0.
    @inline(__always)
    static func trimmableLengthBefore(_ base: UnsafeRawPointer, end: Int, start: Int) -> Int {
        let last = base.load(fromByteOffset: end - 1, as: UInt8.self)
        if last < 0x80 { return (0x09...0x0D).contains(last) || last == 0x20 ? 1 : 0 }
        if end - 2 >= start, base.load(fromByteOffset: end - 2, as: UInt8.self) == 0xC2 {
            return last == 0x85 || last == 0xA0 ? 2 : 0
        }
        if end - 3 >= start {
            let b0 = base.load(fromByteOffset: end - 3, as: UInt8.self)
            let b1 = base.load(fromByteOffset: end - 2, as: UInt8.self)
            return isTrimmable3(b0, b1, last) ? 3 : 0
        }
        return 0
    }

    /// U+1680, U+2000–U+200B, U+2028, U+2029, U+202F, U+205F, U+3000.
    @inline(__always)
    static func isTrimmable3(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Bool {
        switch (b0, b1) {
        case (0xE1, 0x9A): return b2 == 0x80
        case (0xE2, 0x80): return (0x80...0x8B).contains(b2) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF
        case (0xE2, 0x81): return b2 == 0x9F
        case (0xE3, 0x80): return b2 == 0x80
        default: return false
        }
    }

    /// Whether `bytes`, one or two bytes cut from the start of a multi-byte scalar, can still be
    /// the start of a trimmable one: a lead byte of U+0085/U+00A0 (`C2`) or of the three-byte
    /// scalars above, or one of the byte pairs ``isTrimmable3(_:_:_:)`` accepts. For a prefix that
    /// ends inside a scalar (``PrefixSniffer``).
    static func canBeginTrimmable(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch bytes.count {
        case 1: return bytes[0] == 0xC2 || (0xE1...0xE3).contains(bytes[0])
        case 2:
            switch (bytes[0], bytes[1]) {
            case (0xE1, 0x9A), (0xE2, 0x80), (0xE2, 0x81), (0xE3, 0x80): return true
            default: return false
            }
        default: return false
        }
    }

    /// The range left after trimming trimmable scalars from both ends of `[0, count)`.
    static func trimmedRange(_ base: UnsafeRawPointer, count: Int) -> Range<Int> {
        var start = 0
        while start < count {
            let n = trimmableLength(base, at: start, end: count)
            if n == 0 { break }
            start += n
        }
        var end = count
        while end > start {
            let n = trimmableLengthBefore(base, end: end, start: start)
            if n == 0 { break }
            end -= n
        }
        return start..<end
    }
}

// MARK: - XML whitespace

extension UInt8 {
    /// Whether the byte is XML whitespace, the `S` production of XML 1.0: space, tab, CR or LF
    /// (0x20, 0x09, 0x0D, 0x0A). The same four bytes are JSON's whitespace (RFC 8259).
    ///
    /// Narrower than the cookbook's trimmable set (`CookbookWhitespace`), which also holds
    /// VT, FF and Unicode spaces: this is what is trimmed around a base64 or encoded value read
    /// from a file or a record, and what separates XML and JSON tokens.
    @inlinable
    public var isXMLWhitespace: Bool {
        self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D
    }
}
