/// RFC 4648 base64 with the standard alphabet and `=` padding, no line breaks — what
/// Foundation's `base64EncodedString(options: [])` produces.
public enum Base64 {
    /// The alphabet, as static bytes so no table has to be initialised at run time.
    @usableFromInline
    static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Exact length of the encoding of `count` bytes.
    @inlinable
    public static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Upper bound of the decoding of `count` base64 characters.
    @inlinable
    public static func maximumDecodedCount(_ count: Int) -> Int { (count + 3) / 4 * 3 }

    /// Encodes `input` into `output` and returns the number of bytes written.
    /// - Precondition: `output.count >= encodedCount(input.count)`; the buffers do not overlap.
    public static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(output.count >= encodedCount(input.count), "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        let table = alphabet.utf8Start
        let count = input.count
        var i = 0
        var o = 0
        // Invariant: input[0..<i] (i a multiple of 3) is encoded in output[0..<o], o == i / 3 * 4.
        Base64PairTable.entries.withUnsafeBufferPointer { pairs in
            let t = pairs.baseAddress!
            // Six bytes in, eight characters out, while an 8-byte load stays inside the input.
            while i + 8 <= count {
                let word = UInt64(bigEndian: src.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                dst.storeBytes(of: Base64PairTable.encode48(word, t).littleEndian, toByteOffset: o, as: UInt64.self)
                i += 6
                o += 8
            }
        }
        while i + 3 <= count {
            let v =
                UInt32(src.load(fromByteOffset: i, as: UInt8.self)) << 16
                | UInt32(src.load(fromByteOffset: i + 1, as: UInt8.self)) << 8
                | UInt32(src.load(fromByteOffset: i + 2, as: UInt8.self))
            let quad =
                UInt32(table[Int(v >> 18)])
                | UInt32(table[Int(v >> 12 & 63)]) << 8
                | UInt32(table[Int(v >> 6 & 63)]) << 16
                | UInt32(table[Int(v & 63)]) << 24
            dst.storeBytes(of: quad.littleEndian, toByteOffset: o, as: UInt32.self)
            i += 3
            o += 4
        }
        let rest = count - i
        if rest > 0 {
            let b0 = UInt32(src.load(fromByteOffset: i, as: UInt8.self))
            let b1 = rest == 2 ? UInt32(src.load(fromByteOffset: i + 1, as: UInt8.self)) : 0
            let v = b0 << 16 | b1 << 8
            dst.storeBytes(of: table[Int(v >> 18)], toByteOffset: o, as: UInt8.self)
            dst.storeBytes(of: table[Int(v >> 12 & 63)], toByteOffset: o + 1, as: UInt8.self)
            dst.storeBytes(of: rest == 2 ? table[Int(v >> 6 & 63)] : UInt8(ascii: "="), toByteOffset: o + 2, as: UInt8.self)
            dst.storeBytes(of: UInt8(ascii: "="), toByteOffset: o + 3, as: UInt8.self)
            o += 4
        }
        return o
    }

    /// Decodes strict base64 from `input` into `output` and returns the number of bytes written.
    ///
    /// Line breaks (CR, LF) are skipped, so MIME-wrapped captures decode; anything else outside
    /// the alphabet, padding that is not at the end, or a length that is not a whole number of
    /// 4-character groups is `malformed_base64`, with the offset of the offending character.
    /// - Precondition: `output.count >= maximumDecodedCount(input.count)`. `output` may be the
    ///   same memory as `input` (decoding in place is safe: the output never overtakes the input).
    public static func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SAMLEncodingError) -> Int {
        precondition(output.count >= maximumDecodedCount(input.count), "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        let count = input.count
        var i = 0
        var o = 0
        var group: UInt32 = 0
        var filled = 0
        var padding = 0
        while i < count {
            if filled == 0 && padding == 0 {
                // Fast path: whole groups of four alphabet characters, three bytes each.
                // In place is safe: a group is read completely before its bytes are written.
                Base64DecodeTable.values.withUnsafeBufferPointer { t in
                    while i + 4 <= count {
                        let a = t[Int(src.load(fromByteOffset: i, as: UInt8.self))]
                        let b = t[Int(src.load(fromByteOffset: i + 1, as: UInt8.self))]
                        let c = t[Int(src.load(fromByteOffset: i + 2, as: UInt8.self))]
                        let d = t[Int(src.load(fromByteOffset: i + 3, as: UInt8.self))]
                        if (a | b | c | d) & 0xC0 != 0 { break }  // padding, a line break or an error
                        let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        dst.storeBytes(of: UInt8(truncatingIfNeeded: v >> 16), toByteOffset: o, as: UInt8.self)
                        dst.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: o + 1, as: UInt8.self)
                        dst.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: o + 2, as: UInt8.self)
                        i += 4
                        o += 3
                    }
                }
                if i >= count { break }
            }
            let c = src.load(fromByteOffset: i, as: UInt8.self)
            let value = Base64.decodeValue(c)
            if value < 64 {
                guard padding == 0 else {
                    throw SAMLEncodingError(.malformedBase64, "data after '=' padding at byte \(i)", offset: i)
                }
                group = group << 6 | UInt32(value)
                filled += 1
            } else if c == UInt8(ascii: "=") {
                guard filled >= 2 else {
                    throw SAMLEncodingError(.malformedBase64, "misplaced '=' padding at byte \(i)", offset: i)
                }
                padding += 1
                group <<= 6
                filled += 1
            } else if c == 0x0A || c == 0x0D {
                i += 1
                continue
            } else {
                throw SAMLEncodingError(
                    .malformedBase64, "byte 0x\(HexDigits.string(c)) at offset \(i) is not in the base64 alphabet", offset: i)
            }
            if filled == 4 {
                dst.storeBytes(of: UInt8(truncatingIfNeeded: group >> 16), toByteOffset: o, as: UInt8.self)
                if padding < 2 { dst.storeBytes(of: UInt8(truncatingIfNeeded: group >> 8), toByteOffset: o + 1, as: UInt8.self) }
                if padding < 1 { dst.storeBytes(of: UInt8(truncatingIfNeeded: group), toByteOffset: o + 2, as: UInt8.self) }
                o += 3 - padding
                group = 0
                filled = 0
                if padding > 0 { padding = 3 }  // nothing but line breaks may follow
            }
            i += 1
        }
        guard filled == 0 else {
            throw SAMLEncodingError(
                .malformedBase64, "input ends inside a 4-character group (length is not a multiple of 4)",
                offset: count)
        }
        return o
    }

    /// The 6-bit value of a base64 character, or 0xFF.
    @inline(__always)
    static func decodeValue(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c &- 65
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c &- 71
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &+ 4
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return 0xFF
        }
    }
}

// MARK: - Lookup tables

/// The 6-bit value of every byte, 0xFF for bytes outside the alphabet: one lookup instead of a
/// range switch in the decoder's fast path. Built once on first use.
enum Base64DecodeTable {
    static let values: [UInt8] = (0..<256).map { Base64.decodeValue(UInt8($0)) }
}

/// Two base64 characters for every 12-bit value, so the encoders look up two characters at a
/// time (half the lookups of the 64-entry alphabet). Entry `v` holds `alphabet[v >> 6]` in its
/// low byte and `alphabet[v & 63]` in its high byte: stored little-endian, that is their order
/// in the output. 8 KiB, built once on first use.
enum Base64PairTable {
    static let entries: [UInt16] = {
        let alphabet: UnsafePointer<UInt8> = Base64.alphabet.utf8Start
        var table = [UInt16](repeating: 0, count: 4096)
        for v in 0..<4096 {
            let first = UInt16(alphabet[v >> 6])
            let second = UInt16(alphabet[v & 63])
            table[v] = first | second << 8
        }
        return table
    }()

    /// Eight characters for the 48 bits at the top of `word` (big-endian order), as a
    /// little-endian word ready to be stored.
    @inline(__always)
    static func encode48(_ word: UInt64, _ t: UnsafePointer<UInt16>) -> UInt64 {
        UInt64(t[Int(truncatingIfNeeded: word >> 52)])
            | UInt64(t[Int(truncatingIfNeeded: word >> 40 & 0xFFF)]) << 16
            | UInt64(t[Int(truncatingIfNeeded: word >> 28 & 0xFFF)]) << 32
            | UInt64(t[Int(truncatingIfNeeded: word >> 16 & 0xFFF)]) << 48
    }
}
