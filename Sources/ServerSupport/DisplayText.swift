/// Escaping for values the gateway and the CLI print: text from a response, a trust store, a
/// Redis error or a file name must never start a line of its own, move the cursor, or reorder
/// what a reader sees. One definition serves the text logs, `trust list`'s table and the JSON
/// lines (``JSONLine``), so all of them refuse the same characters.
package enum DisplayText {
    /// True for the characters no printed value carries as is: C0 controls (CR, LF, tab, …),
    /// DEL, C1 controls (NEL among them), the Unicode line and paragraph separators, and the
    /// bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E–200F,
    /// U+202A–202E, U+2066–2069), which let right-to-left text disguise what follows it.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029: true
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every unsafe character written visibly — `\n`, `\r`, `\t`, else `\u{85}` —
    /// and the backslash doubled, so the escaped form reads back unambiguously.
    package static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) || $0 == "\\" }) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isUnsafe(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

// MARK: - JSON lines

/// Builds one JSON object on one line, keys in the order they are added (so the CLI's output
/// reads in the documented order), with correct string escaping. Shared by the CLI's output
/// lines and the gateway's error and status bodies.
package struct JSONLine {
    package init() {}

    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        text += Self.quote(name) + ":"
    }

    package mutating func add(_ name: String, _ value: String?) {
        key(name)
        text += value.map(Self.quote) ?? "null"
    }

    package mutating func add(_ name: String, _ value: Bool?) {
        key(name)
        text += value.map { $0 ? "true" : "false" } ?? "null"
    }

    package mutating func add(_ name: String, _ value: Int?) {
        key(name)
        text += value.map(String.init) ?? "null"
    }

    /// Adds an already-serialized JSON value (an object built with another `JSONLine`, say).
    package mutating func add(_ name: String, json: String?) {
        key(name)
        text += json ?? "null"
    }

    package mutating func add(_ name: String, _ values: [String]) {
        key(name)
        text += "[" + values.map(Self.quote).joined(separator: ",") + "]"
    }

    package mutating func add(_ name: String, _ values: [String: [String]]) {
        key(name)
        text +=
            "{"
            + values.keys.sorted().map { k in
                Self.quote(k) + ":[" + values[k, default: []].map(Self.quote).joined(separator: ",") + "]"
            }.joined(separator: ",") + "}"
    }

    package var json: String { text + "}" }

    package static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // Controls, DEL, C1 and bidi overrides too: valid JSON either way, but a reader of the
            // raw line (a terminal, a log viewer) must not see them act.
            case _ where DisplayText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
