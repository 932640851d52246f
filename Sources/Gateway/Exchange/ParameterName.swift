import SAMLEncoding

/// A form or query parameter name as the most lenient common backend reads it.
///
/// Backends do not agree on what a name is. PHP trims leading blanks, turns `.` and spaces into
/// `_`, makes `name[]` and `name[key]` an array and keeps the last copy; Rack and Rails read
/// `name[]` too; some frameworks compare names without regard to case (Java's
/// `equalsIgnoreCase` also folds `ſ` to `s` and `ı`/`İ` to `i`), Python's `strip()` trims Unicode
/// blanks, C parsers stop at a NUL and Java's `trim()` strips a leading one. So `+SAMLResponse`, `SAMLResponse[]`, `samlresponse%00x` or
/// ` SAMLResponse ` may be the field the gateway verified to one backend and another field to the
/// gateway. ``fold(encoded:into:)`` brings a name to one key under all of these at once, so that a
/// name the gateway reads can be refused in any of its spellings but the canonical one.
///
/// The key: form-decoded once (`%XX`, `+` as a space); cut at the first `[`; blanks and
/// controls (ASCII and Unicode white space, zero-width characters, a BOM, NUL) and `+` (an
/// escaped one too: decoders that replace `+` after decoding `%2B`) trimmed at the start; cut at
/// the first NUL after that; the same blanks trimmed at the end;
/// `.` and space as `_`; letters folded to ASCII lower case, including full-width letters and
/// the non-ASCII letters that case-insensitive comparisons equate with ASCII ones.
///
/// Full case folding and compatibility forms (`ﬆ` as `st`, `ß` as `ss`, `𝐒` as `S`) are not
/// folded: an exchange form refuses any name with a non-ASCII or control character outright
/// (``FormBody/parse(_:unique:)``), and the query refuses control characters anywhere.
enum ParameterName {
    /// Keys longer than this are left unfolded (``fold(encoded:into:)`` answers `false`): no name
    /// the gateway reads comes close.
    static let maximumKey = 32

    /// Folds the encoded name `name` into `key` (cleared first). Returns `false`, with `key`
    /// unspecified, when the key would be longer than ``maximumKey``. One pass over the name,
    /// no allocation once `key` has grown to the name's size.
    static func fold(encoded name: UnsafeRawBufferPointer, into key: inout [UInt8]) -> Bool {
        key.removeAll(keepingCapacity: true)
        // Decoded, and cut at the first `[`.
        var i = 0
        while i < name.count {
            var byte = name[i]
            if byte == UInt8(ascii: "+") {
                byte = UInt8(ascii: " ")
                i += 1
            } else if byte == UInt8(ascii: "%"), i + 2 < name.count, let high = HexDigits.value(name[i + 1]), let low = HexDigits.value(name[i + 2]) {
                byte = high << 4 | low
                i += 3
            } else {
                i += 1
            }
            if byte == UInt8(ascii: "[") { break }
            key.append(byte)
        }
        // Trimmed at the start (a leading NUL too, as Java's `trim()` does), cut at the first
        // NUL after that (as C parsers read it), trimmed at the end.
        var start = 0
        while start < key.count, let width = blankWidth(key, at: start) { start += width }
        var end = key[start...].firstIndex(of: 0) ?? key.count
        while end > start, let width = blankWidth(key, at: end, ending: true) { end -= width }
        guard end - start <= maximumKey * 3 else { return false }
        // Folded, in place (a folded character is never longer than its spelling).
        var out = 0
        var j = start
        while j < end {
            let byte = key[j]
            var folded: UInt8
            var width = 1
            if byte < 0x80 {
                folded = byte
            } else if let (letter, length) = foldedLetter(key, at: j, end: end) {
                folded = letter
                width = length
            } else {
                folded = byte
            }
            switch folded {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): folded |= 0x20
            case UInt8(ascii: "."), UInt8(ascii: " "): folded = UInt8(ascii: "_")
            default: break
            }
            key[out] = folded
            out += 1
            j += width
        }
        key.removeSubrange(out...)
        return key.count <= maximumKey
    }

    /// Whether `key` (from ``fold(encoded:into:)``) is the key of `name` (ASCII lower case,
    /// without `[`, blanks, `.` or NUL: the names the gateway reads).
    static func matches(_ key: [UInt8], _ lowercased: String) -> Bool {
        key.count == lowercased.utf8.count && key.elementsEqual(lowercased.utf8)
    }

    /// The UTF-8 length of the blank or control character starting at `i` (`ending`: ending
    /// just before `i`), or `nil`.
    private static func blankWidth(_ bytes: [UInt8], at i: Int, ending: Bool = false) -> Int? {
        let byte = ending ? bytes[i - 1] : bytes[i]
        if byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "+") { return 1 }
        for blank in unicodeBlanks {
            let start = ending ? i - blank.count : i
            if start >= 0, start + blank.count <= bytes.count, bytes[start..<(start + blank.count)].elementsEqual(blank) { return blank.count }
        }
        return nil
    }

    /// The ASCII letter a non-ASCII letter at `i` is taken for by case-insensitive comparisons
    /// or best-fit conversions, with its UTF-8 length; `nil` for any other character.
    private static func foldedLetter(_ bytes: [UInt8], at i: Int, end: Int) -> (UInt8, Int)? {
        let lead = bytes[i]
        if lead == 0xC4 || lead == 0xC5, i + 1 < end {
            switch (lead, bytes[i + 1]) {
            case (0xC5, 0xBF): return (UInt8(ascii: "s"), 2)  // ſ U+017F
            case (0xC4, 0xB0), (0xC4, 0xB1): return (UInt8(ascii: "i"), 2)  // İ U+0130, ı U+0131
            default: return nil
            }
        }
        guard i + 2 < end else { return nil }
        switch (lead, bytes[i + 1], bytes[i + 2]) {
        case (0xE2, 0x84, 0xAA): return (UInt8(ascii: "k"), 3)  // Kelvin sign U+212A
        case (0xEF, 0xBC, 0xA1...0xBA): return (UInt8(ascii: "a") + bytes[i + 2] - 0xA1, 3)  // Ａ–Ｚ U+FF21–FF3A
        case (0xEF, 0xBD, 0x81...0x9A): return (UInt8(ascii: "a") + bytes[i + 2] - 0x81, 3)  // ａ–ｚ U+FF41–FF5A
        default: return nil
        }
    }

    /// Unicode white space, zero-width characters and the BOM, in UTF-8: U+0085, U+00A0, U+1680,
    /// U+180E, U+2000–U+200D, U+2028, U+2029, U+202F, U+205F, U+2060, U+3000, U+FEFF.
    private static let unicodeBlanks: [[UInt8]] =
        [[0xC2, 0x85], [0xC2, 0xA0], [0xE1, 0x9A, 0x80], [0xE1, 0xA0, 0x8E]]
        + (0x80...0x8D).map { [0xE2, 0x80, UInt8($0)] }
        + [
            [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80, 0xAF], [0xE2, 0x81, 0x9F], [0xE2, 0x81, 0xA0], [0xE3, 0x80, 0x80],
            [0xEF, 0xBB, 0xBF],
        ]
}
