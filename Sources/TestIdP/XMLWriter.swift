import Foundation

/// Builds XML text, compact, with bare line breaks, or indented. Escapes text and attributes.
struct XMLWriter {
    private(set) var text = ""
    let lineBreaks: Bool
    let indentation: Bool
    private(set) var level: Int

    init(pretty: Bool, level: Int = 0) {
        self.init(lineBreaks: pretty, indentation: pretty, level: level)
    }

    init(lineBreaks: Bool, indentation: Bool, level: Int = 0) {
        self.lineBreaks = lineBreaks
        self.indentation = indentation
        self.level = level
    }

    private mutating func indent() {
        if indentation { text += String(repeating: "  ", count: level) }
    }

    private mutating func newline() {
        if lineBreaks { text += "\n" }
    }

    private static func attributes(_ attrs: [(String, String)]) -> String {
        attrs.map { " \($0.0)=\"\(escape($0.1, attribute: true))\"" }.joined()
    }

    mutating func open(_ name: String, _ attrs: [(String, String)] = []) {
        indent()
        text += "<\(name)\(Self.attributes(attrs))>"
        newline()
        level += 1
    }

    mutating func close(_ name: String) {
        level -= 1
        indent()
        text += "</\(name)>"
        newline()
    }

    mutating func empty(_ name: String, _ attrs: [(String, String)] = []) {
        indent()
        text += "<\(name)\(Self.attributes(attrs))/>"
        newline()
    }

    mutating func leaf(_ name: String, _ content: String) {
        leaf(name, [], content)
    }

    mutating func leaf(_ name: String, _ attrs: [(String, String)], _ content: String) {
        indent()
        text += "<\(name)\(Self.attributes(attrs))>\(Self.escape(content, attribute: false))</\(name)>"
        newline()
    }

    /// Appends pre-built markup as is.
    mutating func raw(_ markup: String) {
        text += markup
    }

    static func escape(_ value: String, attribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for ch in value.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "\n" where attribute: out += "&#10;"
            case "\t" where attribute: out += "&#9;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}

// MARK: - Timestamps

/// Formats instants as SAML `xs:dateTime` in UTC with a `Z` (`2025-01-31T12:00:00Z`).
enum SAMLTimestamp {
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))Z"
    }

    /// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
