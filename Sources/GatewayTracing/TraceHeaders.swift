import Tracing

/// The carrier the tracer extracts the client's accepted `traceparent` (and `tracestate`) from
/// and injects the gateway's span into: a dictionary, not the request's headers, because the
/// gateway decides which `traceparent` counts (`TraceContext`) and writes the upstream's itself.
struct TraceHeaders: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }

    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }

    /// Whether `state` is a `tracestate` both W3C Trace Context's grammar and swift-otel's reader
    /// accept: at most 32 list members `key=value`, separated by `,` and optional spaces. A key is
    /// 1 to 256 of `a-z`, digits, `_-*/@`, starting with a letter or a digit; a value 1 to 256
    /// printable ASCII characters but `,` and `=`, not ending in a space. swift-otel's reader also
    /// wants no empty list member, at most one `@` in a key and at most 14 characters after it.
    ///
    /// The gateway forwards any printable `tracestate` of at most 512 bytes; swift-otel's tracer
    /// drops the whole parent for one its reader refuses.
    static func isWellFormedState(_ state: String) -> Bool {
        let members = state.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard members.count <= 32 else { return false }
        for (index, member) in members.enumerated() {
            // Spaces after a comma are optional whitespace; none before the first member.
            let trimmed = index == 0 ? member[...] : member.drop(while: { $0 == UInt8(ascii: " ") })
            guard let equals = trimmed.firstIndex(of: UInt8(ascii: "=")),
                isKey(trimmed[..<equals]), isValue(trimmed[trimmed.index(after: equals)...])
            else { return false }
        }
        return true
    }

    private static func isKey(_ key: Substring.UTF8View) -> Bool {
        guard (1...256).contains(key.count), isLowerAlpha(key.first) || isDigit(key.first),
            key.allSatisfy({ isKeyCharacter($0) || $0 == UInt8(ascii: "@") })
        else { return false }
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else { return true }
        let system = key[key.index(after: at)...]
        return key.distance(from: key.startIndex, to: at) <= 241 && (1...14).contains(system.count) && !system.contains(UInt8(ascii: "@"))
    }

    private static func isValue(_ value: Substring.UTF8View) -> Bool {
        // Spaces before the next comma are optional whitespace, not the value's.
        var end = value.endIndex
        while end > value.startIndex, value[value.index(before: end)] == UInt8(ascii: " ") { end = value.index(before: end) }
        let trimmed = value[..<end]
        return (1...256).contains(trimmed.count)
            && trimmed.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }

    private static func isKeyCharacter(_ byte: UInt8) -> Bool {
        isLowerAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "*")
            || byte == UInt8(ascii: "/")
    }

    private static func isLowerAlpha(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ?? false
    }

    private static func isDigit(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false
    }
}
