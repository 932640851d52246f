/// Readings of HTTP field values (RFC 9110 §5.5, §5.6) on their bytes: each one pass over at
/// most the value, in place (header values are native strings: no copy), no Foundation string
/// operation and no allocation, so that a hostile value costs its length and nothing more
/// (trimming, splitting and lower-casing whole values with Foundation, or walking them through
/// the generic `UTF8View` index, cost many times what the parser that received them did).
public enum HTTPFieldValue {
    /// Whether `value`, blanks (space, tab) around it aside, is `lowercased` with ASCII letters
    /// in any case; every other byte must match exactly. `lowercased` holds lower-case ASCII.
    public static func equalsIgnoringCase(_ value: String, _ lowercased: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { equalsIgnoringCase($0, trimmed($0, 0..<$0.count), lowercased) }
    }

    public static func equalsIgnoringCase(_ value: Substring, _ lowercased: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { equalsIgnoringCase($0, trimmed($0, 0..<$0.count), lowercased) }
    }

    /// The media type of a `Content-Type` value, or of the first element of an `Accept` list
    /// (`listElement`): the bytes before the first `;` (and `,`), blanks around them aside.
    public static func mediaType(_ value: String, listElement: Bool) -> Substring {
        var copy = value
        let range = copy.withUTF8 { bytes in
            var end = 0
            while end < bytes.count, bytes[end] != UInt8(ascii: ";"), !(listElement && bytes[end] == UInt8(ascii: ",")) { end += 1 }
            return trimmed(bytes, 0..<end)
        }
        return substring(value, range)
    }

    /// Calls `body` with each non-empty element of a comma-separated list (RFC 9110 §5.6.1),
    /// blanks around it aside, from the last to the first when `reversed`, until it returns
    /// `false`. Quoted strings are not special: the lists read this way (`Connection`,
    /// `X-Forwarded-For`) hold tokens and addresses only.
    public static func forEachElement(of value: String, reversed: Bool = false, _ body: (Substring) -> Bool) {
        var copy = value
        copy.withUTF8 { bytes in
            let comma = UInt8(ascii: ",")
            // Invariant: every element past `end` (reversed) or before `start` has been given.
            if reversed {
                var end = bytes.count
                while end > 0 {
                    var start = end
                    while start > 0, bytes[start - 1] != comma { start -= 1 }
                    let element = trimmed(bytes, start..<end)
                    if !element.isEmpty, !body(substring(value, element)) { return }
                    end = max(start - 1, 0)
                }
            } else {
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count, bytes[end] != comma { end += 1 }
                    let element = trimmed(bytes, start..<end)
                    if !element.isEmpty, !body(substring(value, element)) { return }
                    start = end + 1
                }
            }
        }
    }

    /// How many non-empty elements a comma-separated list holds, counting no further than
    /// `limit + 1` (so a value of a million commas is not walked to its end).
    public static func elementCount(of values: [String], limit: Int) -> Int {
        var count = 0
        for value in values {
            forEachElement(of: value) { _ in
                count += 1
                return count <= limit
            }
            if count > limit { break }
        }
        return count
    }

    /// `range` of `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        for (offset, index) in range.enumerated() {
            let expected = lowercased.utf8Start[offset]
            let isLetter = expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z")
            guard isLetter ? bytes[index] | 0x20 == expected : bytes[index] == expected else { return false }
        }
        return true
    }

    /// The bytes `range` of `value` (offsets into its UTF-8, on ASCII boundaries) as a substring.
    private static func substring(_ value: String, _ range: Range<Int>) -> Substring {
        let utf8 = value.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let upper = utf8.index(lower, offsetBy: range.count)
        return Substring(utf8[lower..<upper])
    }
}
