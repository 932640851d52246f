/// A parsed JSON value, for the small documents where a tree is the simple answer (one HAR
/// entry at a time, never a whole file).
indirect enum JSONValue: Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    /// Numbers keep their text: HAR carries them along, nothing computes with them.
    case number(String)
    case bool(Bool)
    case null

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.array(a), .array(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// The member named `key` of an object (keys are unique: ``parse(_:)`` refuses repeats),
    /// compared as bytes, not as Unicode-equivalent text.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key.utf8.elementsEqual(key.utf8) }?.value
    }

    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var array: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Parses one complete JSON text.
    static func parse(_ text: UnsafeRawBufferPointer) throws(RecordError) -> JSONValue {
        var i = 0
        let value = try parseValue(text, &i, depth: 0)
        JSONSyntax.skipWhitespace(text, &i)
        guard i == text.count else { throw JSONSyntax.error("text after the value", at: i) }
        return value
    }

    private static func parseValue(_ text: UnsafeRawBufferPointer, _ i: inout Int, depth: Int) throws(RecordError) -> JSONValue {
        JSONSyntax.skipWhitespace(text, &i)
        guard i < text.count else { throw JSONSyntax.error("missing value", at: i) }
        guard depth < JSONSyntax.maximumDepth else { throw JSONSyntax.error("nesting too deep", at: i) }
        switch text[i] {
        case 0x22:
            let end = try JSONSyntax.endOfString(text, from: i).end
            let value = try JSONSyntax.string(text, i..<end)
            i = end
            return .string(value)
        case UInt8(ascii: "{"):
            i += 1
            var members: [(key: String, value: JSONValue)] = []
            JSONSyntax.skipWhitespace(text, &i)
            if i < text.count, text[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members)
            }
            // A repeated key is refused: `subscript` reads the first copy, other parsers the last.
            var keys = JSONKeySet()
            while true {
                JSONSyntax.skipWhitespace(text, &i)
                guard i < text.count, text[i] == 0x22 else { throw JSONSyntax.error("expected a key", at: i) }
                let (end, escaped) = try JSONSyntax.endOfString(text, from: i)
                let key = String(decoding: try keys.insert(text, string: i..<end, escaped: escaped), as: UTF8.self)
                i = end
                JSONSyntax.skipWhitespace(text, &i)
                guard i < text.count, text[i] == UInt8(ascii: ":") else { throw JSONSyntax.error("expected ':'", at: i) }
                i += 1
                members.append((key, try parseValue(text, &i, depth: depth + 1)))
                JSONSyntax.skipWhitespace(text, &i)
                guard i < text.count else { throw JSONSyntax.error("unterminated object", at: i) }
                if text[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(members)
                }
                guard text[i] == UInt8(ascii: ",") else { throw JSONSyntax.error("expected ',' or '}'", at: i) }
                i += 1
            }
        case UInt8(ascii: "["):
            i += 1
            var elements: [JSONValue] = []
            JSONSyntax.skipWhitespace(text, &i)
            if i < text.count, text[i] == UInt8(ascii: "]") {
                i += 1
                return .array(elements)
            }
            while true {
                elements.append(try parseValue(text, &i, depth: depth + 1))
                JSONSyntax.skipWhitespace(text, &i)
                guard i < text.count else { throw JSONSyntax.error("unterminated array", at: i) }
                if text[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(elements)
                }
                guard text[i] == UInt8(ascii: ",") else { throw JSONSyntax.error("expected ',' or ']'", at: i) }
                i += 1
            }
        default:
            let start = i
            i = try JSONSyntax.endOfValue(text, from: i, depth: depth)
            switch text[start] {
            case UInt8(ascii: "t"): return .bool(true)
            case UInt8(ascii: "f"): return .bool(false)
            case UInt8(ascii: "n"): return .null
            default: return .number(String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<i]), as: UTF8.self))
            }
        }
    }
}
