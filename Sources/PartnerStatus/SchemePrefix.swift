/// The scheme word and its one space at the start of a header value (`Bearer `, `fingerprint `),
/// compared as the headers' readers compare them: letters in any case, every other byte exactly
/// (folding all bytes with `| 0x20` would take a NUL for the space).
enum SchemePrefix {
    /// Whether `bytes` start with `lowercased`, which holds lower-case letters and other ASCII.
    static func matches<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ lowercased: String) -> Bool {
        var value = bytes.makeIterator()
        for expected in lowercased.utf8 {
            guard let byte = value.next() else { return false }
            let isLetter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(expected)
            guard isLetter ? byte | 0x20 == expected : byte == expected else { return false }
        }
        return true
    }
}
