/// Finds the first byte that is not part of a well-formed UTF-8 sequence (RFC 3629, Unicode
/// table 3-7): no overlong forms, no surrogates, nothing above U+10FFFF.
///
/// The cookbook works on a Swift `String`, which can only hold valid UTF-8, so invalid bytes
/// are an input error for us rather than something to repair.
public enum UTF8Validator {
    /// Returns the offset of the lead byte of the first ill-formed sequence, or `nil` when the
    /// whole buffer is valid UTF-8.
    public static func firstInvalidOffset(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var i = 0
        while i < count {
            // Invariant: every byte before `i` belongs to a complete, valid sequence.
            if i + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            let lead = base.load(fromByteOffset: i, as: UInt8.self)
            if lead < 0x80 {
                i += 1
                continue
            }
            let length = sequenceLength(base, at: i, lead: lead, count: count)
            if length == 0 { return i }
            i += length
        }
        return nil
    }

    /// Length of the valid multi-byte sequence starting at `i`, or 0 when it is ill-formed.
    @inline(__always)
    static func sequenceLength(
        _ base: UnsafeRawPointer, at i: Int, lead: UInt8, count: Int
    ) -> Int {
        @inline(__always) func byte(_ k: Int) -> UInt8? {
            i + k < count ? base.load(fromByteOffset: i + k, as: UInt8.self) : nil
        }
        @inline(__always) func isCont(_ b: UInt8?) -> Bool { b.map { $0 & 0xC0 == 0x80 } ?? false }
        switch lead {
        case 0xC2...0xDF:
            return isCont(byte(1)) ? 2 : 0
        case 0xE0...0xEF:
            guard let b1 = byte(1) else { return 0 }
            let secondOK: Bool
            switch lead {
            case 0xE0: secondOK = (0xA0...0xBF).contains(b1)
            case 0xED: secondOK = (0x80...0x9F).contains(b1)
            default: secondOK = b1 & 0xC0 == 0x80
            }
            return secondOK && isCont(byte(2)) ? 3 : 0
        case 0xF0...0xF4:
            guard let b1 = byte(1) else { return 0 }
            let secondOK: Bool
            switch lead {
            case 0xF0: secondOK = (0x90...0xBF).contains(b1)
            case 0xF4: secondOK = (0x80...0x8F).contains(b1)
            default: secondOK = b1 & 0xC0 == 0x80
            }
            return secondOK && isCont(byte(2)) && isCont(byte(3)) ? 4 : 0
        default:
            return 0
        }
    }
}
