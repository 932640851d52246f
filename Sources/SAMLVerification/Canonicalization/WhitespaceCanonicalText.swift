import CXMLSec

/// Compares two texts the way the cookbook's whitespace rule sees them, without allocating:
/// each run of spaces and tabs counts as one space, and the seven line terminators the cookbook
/// deletes (LF, VT, FF, CR, NEL, LS, PS) count as nothing — in that order, as the cookbook does,
/// so the spaces on both sides of a deleted line break stay two spaces.
///
/// Used on the content of text, CDATA, comment and processing-instruction nodes, where the
/// cookbook's normalization may legitimately change whitespace and nothing else.
enum WhitespaceCanonicalText {
    static func equal(_ a: UnsafePointer<xmlChar>?, _ b: UnsafePointer<xmlChar>?) -> Bool {
        guard var a, var b else { return a == nil && b == nil }
        // Invariant: the canonical forms of the texts before `a` and before `b` are equal.
        while true {
            let x = next(&a)
            let y = next(&b)
            if x != y { return false }
            if x == 0 { return true }
        }
    }

    /// Whether the canonical form of `text` is empty (nothing but line terminators).
    static func isEmpty(_ text: UnsafePointer<xmlChar>?) -> Bool {
        guard var text else { return true }
        return next(&text) == 0
    }

    /// The next byte of the canonical form (0 at the end), advancing `p` past what it consumed.
    @inline(__always)
    private static func next(_ p: inout UnsafePointer<xmlChar>) -> UInt8 {
        while true {
            let byte = p.pointee
            switch byte {
            case 0:
                return 0
            case 0x20, 0x09:
                repeat { p += 1 } while p.pointee == 0x20 || p.pointee == 0x09
                return 0x20
            case 0x0A, 0x0B, 0x0C, 0x0D:
                p += 1
            case 0xC2 where p[1] == 0x85:
                p += 2
            case 0xE2 where p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9):
                p += 3
            default:
                p += 1
                return byte
            }
        }
    }
}
