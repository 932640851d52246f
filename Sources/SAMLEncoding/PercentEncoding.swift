/// The cookbook's percent-encoding: `addingPercentEncoding(withAllowedCharacters:
/// CharacterSet(charactersIn: "!*'();:@&=+$,/?%#[]").inverted)`.
///
/// Encoded are exactly the 18 reserved ASCII characters and every byte of a non-ASCII scalar,
/// as `%XX` with upper-case hex. Space, controls and DEL pass through unchanged (they are in the
/// inverted set). On base64 text only `+`, `/` and `=` ever change.
package enum PercentEncoding {
    /// Upper bound of the encoding of `count` bytes.
    @inlinable
    package static func maximumEncodedCount(_ count: Int) -> Int { count * 3 }

    /// Whether the cookbook escapes this byte.
    @inline(__always)
    static func needsEscape(_ b: UInt8) -> Bool {
        if b >= 0x80 { return true }
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: "/"),
            UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "?"),
            UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"):
            return true
        default:
            return false
        }
    }

    /// Percent-encodes `input` into `output`; returns the number of bytes written.
    /// - Precondition: `output.count >= maximumEncodedCount(input.count)`; no overlap.
    package static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(output.count >= maximumEncodedCount(input.count), "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        var o = 0
        for i in 0..<input.count {
            let b = src.load(fromByteOffset: i, as: UInt8.self)
            if needsEscape(b) {
                dst.storeBytes(of: UInt8(ascii: "%"), toByteOffset: o, as: UInt8.self)
                dst.storeBytes(of: HexDigits.digit(b >> 4), toByteOffset: o + 1, as: UInt8.self)
                dst.storeBytes(of: HexDigits.digit(b), toByteOffset: o + 2, as: UInt8.self)
                o += 3
            } else {
                dst.storeBytes(of: b, toByteOffset: o, as: UInt8.self)
                o += 1
            }
        }
        return o
    }

    /// Percent-decodes `input` into `output` (every `%XX`, either case). `+` stays `+` unless
    /// `plusAsSpace` (form decoding, `application/x-www-form-urlencoded`). Returns the number of
    /// bytes written.
    ///
    /// A `%` without two hex digits after it is `malformed_percent_encoding` at its offset.
    /// - Precondition: `output.count >= input.count`. In place is safe.
    package static func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, plusAsSpace: Bool = false
    ) throws(SAMLEncodingError) -> Int {
        precondition(output.count >= input.count, "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        let count = input.count
        var i = 0
        var o = 0
        while i < count {
            // Fast path: eight bytes without a '%' (or '+' when it means space) are copied as one
            // word (safe in place: the word is loaded before it is stored, and the store ends at
            // or before i + 8).
            if i + 8 <= count {
                let word = src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let x = word ^ 0x2525_2525_2525_2525
                var special = (x &- 0x0101_0101_0101_0101) & ~x
                if plusAsSpace {
                    let y = word ^ 0x2B2B_2B2B_2B2B_2B2B
                    special |= (y &- 0x0101_0101_0101_0101) & ~y
                }
                if special & 0x8080_8080_8080_8080 == 0 {
                    dst.storeBytes(of: word, toByteOffset: o, as: UInt64.self)
                    i += 8
                    o += 8
                    continue
                }
            }
            let b = src.load(fromByteOffset: i, as: UInt8.self)
            if b == UInt8(ascii: "%") {
                guard i + 2 < count,
                    let hi = HexDigits.value(src.load(fromByteOffset: i + 1, as: UInt8.self)),
                    let lo = HexDigits.value(src.load(fromByteOffset: i + 2, as: UInt8.self))
                else {
                    throw SAMLEncodingError(
                        .malformedPercentEncoding, "'%' at offset \(i) is not followed by two hex digits", offset: i)
                }
                dst.storeBytes(of: hi << 4 | lo, toByteOffset: o, as: UInt8.self)
                i += 3
            } else if plusAsSpace && b == UInt8(ascii: "+") {
                dst.storeBytes(of: UInt8(ascii: " "), toByteOffset: o, as: UInt8.self)
                i += 1
            } else {
                dst.storeBytes(of: b, toByteOffset: o, as: UInt8.self)
                i += 1
            }
            o += 1
        }
        return o
    }
}

// MARK: - Hexadecimal digits

/// Upper-case hexadecimal digits, as the cookbook's percent-encoding writes them.
package enum HexDigits {
    static let upper: StaticString = "0123456789ABCDEF"

    /// The digit for the low four bits of `nibble`.
    @inline(__always)
    static func digit(_ nibble: UInt8) -> UInt8 { upper.utf8Start[Int(nibble & 15)] }

    /// The value of an ASCII hex digit (either case), or nil.
    @inline(__always)
    package static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- 48
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- 55
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- 87
        default: return nil
        }
    }

    /// Lower-case hexadecimal of `bytes`, two digits a byte: how digests, fingerprints and
    /// pseudonyms leave the process (log fields, metric labels, Redis keys, audit lines).
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        let lower: StaticString = "0123456789abcdef"
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(lower.utf8Start[Int(byte >> 4)])
            out.append(lower.utf8Start[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Two upper-case digits for a byte, for error messages.
    static func string(_ b: UInt8) -> String {
        String(decoding: [digit(b >> 4), digit(b)], as: UTF8.self)
    }
}
