/// The 6-bit value of every byte, 0xFF for bytes outside the alphabet: one lookup instead of a
/// range switch in the decoder's fast path. Built once on first use.
enum Base64DecodeTable {
    static let values: [UInt8] = (0..<256).map { Base64.decodeValue(UInt8($0)) }
}
