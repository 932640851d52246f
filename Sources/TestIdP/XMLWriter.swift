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
