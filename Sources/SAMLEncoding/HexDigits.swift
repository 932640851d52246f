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
