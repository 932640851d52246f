/// Base64 in a header value, as the partner status carries it: blanks (space, tab) around it,
/// the standard alphabet, the URL-safe one or both (`-` read as `+`, `_` as `/`), and `=`
/// padding optional — but only as much as completes the last group.
///
/// One pass over the value's bytes and one output array of the decoded size: the cost of a
/// hostile value is its length, whatever it holds.
enum HeaderBase64 {
    /// The decoded bytes, or `nil` when the value is not base64 as above.
    static func decode(_ value: String.UTF8View) -> [UInt8]? {
        var text = value[...]
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        var padding = 0
        while padding < 3, text.last == UInt8(ascii: "=") {
            text.removeLast()
            padding += 1
        }
        // A last group of one symbol holds no whole byte; padding completes a group, no more.
        let tail = text.count % 4
        guard tail != 1, padding == 0 || (tail != 0 && padding <= 4 - tail) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 2)
        // Invariant: `bits` holds the `count` low bits not yet written, fewer than 8.
        var bits: UInt32 = 0
        var count = 0
        for byte in text {
            let sextet = table[Int(byte)]
            guard sextet != invalid else { return nil }
            bits = bits << 6 | UInt32(sextet)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
                bits &= (1 << UInt32(count)) - 1
            }
        }
        return out
    }

    private static let invalid: UInt8 = 0xFF

    /// Each byte's 6-bit value in either alphabet, ``invalid`` for any other byte.
    private static let table: [UInt8] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt8(value) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt8(value) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(value) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: invalid
        }
    }
}
