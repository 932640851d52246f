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
    /// - Precondition: `output.count >= input.count`; `input` is valid UTF-8. `output` may start at
    ///   the same address as `input` (in place), but must not otherwise overlap it.
    public static func normalize(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> Int {
        precondition(output.count >= input.count, "output buffer too small")
        guard let src = input.baseAddress, let dst = output.baseAddress else { return 0 }
        let range = CookbookWhitespace.trimmedRange(src, count: input.count)
        return normalizeInterior(src, range.lowerBound, range.upperBound, into: dst)
    }

    /// The interior pass over `src[start..<end]` (already trimmed) into `dst`.
    ///
    /// Invariant: `o <= i - start` at the top of each iteration (the output never overtakes the
    /// input), which is what makes in-place use safe: a byte is always read before its position
    /// can be written.
    @inline(__always)
    static func normalizeInterior(
        _ src: UnsafeRawPointer, _ start: Int, _ end: Int, into dst: UnsafeMutableRawPointer
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
                if special == 0 {
                    dst.storeBytes(of: word.littleEndian, toByteOffset: o, as: UInt64.self)
                    i += 8
                    o += 8
                    continue
                }
                // Copy the clean bytes before the first special one, one by one: a wide store
                // here could overwrite unread input when working in place.
                let clean = special.trailingZeroBitCount >> 3
                var k = 0
                while k < clean {
                    dst.storeBytes(of: src.load(fromByteOffset: i + k, as: UInt8.self), toByteOffset: o + k, as: UInt8.self)
                    k += 1
                }
                i += clean
                o += clean
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
            case 0xC2 where src.load(fromByteOffset: i + 1, as: UInt8.self) == 0x85:
                i += 2
            case 0xE2 where src.load(fromByteOffset: i + 1, as: UInt8.self) == 0x80
                && src.load(fromByteOffset: i + 2, as: UInt8.self) & 0xFE == 0xA8:
                i += 3  // U+2028, U+2029
            default:
                dst.storeBytes(of: b, toByteOffset: o, as: UInt8.self)
                o += 1
                i += 1
            }
        }
        return o
    }
}
