/// Readings of HTTP field values (RFC 9110 §5.5, §5.6) on their bytes: each one pass over at
/// most the value, no Foundation string operation and no allocation, so that a hostile value
/// costs its length and nothing more (trimming, splitting and lower-casing whole values with
/// Foundation cost far more per byte than the parser that received them).
public enum HTTPFieldValue {
    /// Whether `value`, blanks (space, tab) around it aside, is `lowercased` with ASCII letters
    /// in any case; every other byte must match exactly. `lowercased` holds lower-case ASCII.
    public static func equalsIgnoringCase(_ value: Substring, _ lowercased: StaticString) -> Bool {
        let text = trimmed(value.utf8)
        guard text.count == lowercased.utf8CodeUnitCount else { return false }
        var index = 0
        for byte in text {
            let expected = lowercased.utf8Start[index]
            let isLetter = expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z")
            guard isLetter ? byte | 0x20 == expected : byte == expected else { return false }
            index += 1
        }
        return true
    }

    public static func equalsIgnoringCase(_ value: String, _ lowercased: StaticString) -> Bool {
        equalsIgnoringCase(value[...], lowercased)
    }

    /// The media type of a `Content-Type` value, or of the first element of an `Accept` list
    /// (`listElement`): the bytes before the first `;` (and `,`), blanks around them aside.
    public static func mediaType(_ value: String, listElement: Bool) -> Substring {
        let bytes = value.utf8
        let end =
            bytes.firstIndex { $0 == UInt8(ascii: ";") || (listElement && $0 == UInt8(ascii: ",")) } ?? bytes.endIndex
        let type = trimmed(bytes[bytes.startIndex..<end])
        return Substring(value.utf8[type.startIndex..<type.endIndex])
    }

    /// Calls `body` with each non-empty element of a comma-separated list (RFC 9110 §5.6.1),
    /// blanks around it aside, from the last to the first when `reversed`, until it returns
    /// `false`. Quoted strings are not special: the lists read this way (`Connection`,
    /// `X-Forwarded-For`) hold tokens and addresses only.
    public static func forEachElement(of value: String, reversed: Bool = false, _ body: (Substring) -> Bool) {
        let bytes = value.utf8
        let comma = UInt8(ascii: ",")
        // Invariant: every element beyond `end` (reversed) or before `start` has been given.
        if reversed {
            var end = bytes.endIndex
            while end > bytes.startIndex {
                let start = bytes[bytes.startIndex..<end].lastIndex(of: comma).map(bytes.index(after:)) ?? bytes.startIndex
                let element = trimmed(bytes[start..<end])
                if !element.isEmpty, !body(Substring(element)) { return }
                end = start > bytes.startIndex ? bytes.index(before: start) : start
            }
        } else {
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = bytes[start...].firstIndex(of: comma) ?? bytes.endIndex
                let element = trimmed(bytes[start..<end])
                if !element.isEmpty, !body(Substring(element)) { return }
                start = end < bytes.endIndex ? bytes.index(after: end) : end
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

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var text = bytes
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        return text
    }

    static func trimmed(_ bytes: String.UTF8View) -> Substring.UTF8View { trimmed(bytes[...]) }
}
