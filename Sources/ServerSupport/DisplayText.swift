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
