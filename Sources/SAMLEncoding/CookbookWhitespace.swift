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
