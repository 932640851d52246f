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
