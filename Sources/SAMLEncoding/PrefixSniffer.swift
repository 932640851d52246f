/// Decodes the first few bytes of a base64 stream, one character at a time, to tell whether it
/// is the start of XML — without a buffer or an allocation.
///
/// It keeps at most the first ``capacity`` decoded bytes in a fixed-size tuple.
struct PrefixSniffer {
    static let capacity = 48
    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    private var count = 0
    private var group: UInt32 = 0
    private var filled = 0
    private var ended = false

    /// Whether the sniffer has seen all it needs (its capacity, or the padding).
    var isFull: Bool { ended || count >= Self.capacity }

    /// Feeds one base64 character (alphabet or `=`).
    mutating func feed(_ c: UInt8) {
        guard !ended, count < Self.capacity else { return }
        let value = Base64.decodeValue(c)
        if value >= 64 {  // padding: flush what the group holds and stop
            let usable = filled - 1
            group <<= UInt32(6 * (4 - filled))
            for k in 0..<max(usable, 0) { append(UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * k))) }
            ended = true
            return
        }
        group = group << 6 | UInt32(value)
        filled += 1
        if filled == 4 {
            append(UInt8(truncatingIfNeeded: group >> 16))
            append(UInt8(truncatingIfNeeded: group >> 8))
            append(UInt8(truncatingIfNeeded: group))
            group = 0
            filled = 0
        }
    }

    private mutating func append(_ b: UInt8) {
        guard count < Self.capacity else { return }
        withUnsafeMutableBytes(of: &bytes) { $0[count] = b }
        count += 1
    }

    /// True when the decoded prefix has content that is not the start of an XML document.
    /// A prefix that is all whitespace is given the benefit of the doubt.
    var isDefinitelyNotXML: Bool {
        var copy = bytes
        let n = count
        return withUnsafeBytes(of: &copy) { raw in
            let prefix = UnsafeRawBufferPointer(rebasing: raw[..<n])
            if SAMLForm.startsLikeXML(prefix) { return false }
            guard let base = prefix.baseAddress else { return true }
            // All whitespace so far, around at most one BOM (or a BOM cut short): undecided, so
            // not "definitely not".
            var i = SAMLForm.skipTrimmable(base, from: 0, count: n)
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let rest = n - i
            if rest >= 3, prefix[i] == bom[0], prefix[i + 1] == bom[1], prefix[i + 2] == bom[2] {
                i = SAMLForm.skipTrimmable(base, from: i + 3, count: n)
                return i < n && !Self.startsTrimmableScalar(prefix, from: i)
            }
            if rest == 0 { return n == 0 }
            if rest < 3, (0..<rest).allSatisfy({ prefix[i + $0] == bom[$0] }) { return false }
            return !Self.startsTrimmableScalar(prefix, from: i)
        }
    }

    /// Whether the bytes from `i` to the end of `prefix` are the first one or two bytes of a
    /// multi-byte trimmable scalar that the prefix cut short: still whitespace as far as the
    /// prefix can tell. (Fuzz finding `encoding` #2: a document starting with a BOM and a run of
    /// U+2006 was raw, but its own encoded value was refused as "not XML".)
    static func startsTrimmableScalar(_ prefix: UnsafeRawBufferPointer, from i: Int) -> Bool {
        CookbookWhitespace.canBeginTrimmable(UnsafeRawBufferPointer(rebasing: prefix[i...]))
    }
}
