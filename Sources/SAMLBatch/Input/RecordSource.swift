import ServerSupport

/// Where a record came from, as the output's `source` shows it: the path, `path:LINE` for a
/// JSON Lines record, `path#N` for the N-th entry of a HAR file (both 1-based).
///
/// Distinct records never share a source: the path is spelled with ``RawPath/description``
/// (injective, printable), and a path that itself ends in `:DIGITS` or `#DIGITS` has that `:` or
/// `#` escaped (`\x3A`, `\x23`), so a document named `a.jsonl:1` is not line 1 of `a.jsonl`.
struct RecordSource: Sendable, CustomStringConvertible {
    enum Locator: Sendable {
        case whole
        case line(Int)
        case entry(Int)
    }

    /// The path as printed (see ``name(of:)``).
    var path: String
    var locator: Locator

    /// The printed name of an input, computed once per input.
    static func name(of path: RawPath) -> String {
        let text = path.description
        let utf8 = Array(text.utf8)
        var i = utf8.count
        while i > 0, utf8[i - 1] >= UInt8(ascii: "0"), utf8[i - 1] <= UInt8(ascii: "9") { i -= 1 }
        guard i > 0, i < utf8.count, utf8[i - 1] == UInt8(ascii: ":") || utf8[i - 1] == UInt8(ascii: "#") else { return text }
        let escape = utf8[i - 1] == UInt8(ascii: ":") ? "\\x3A" : "\\x23"
        return String(decoding: utf8[..<(i - 1)], as: UTF8.self) + escape + String(decoding: utf8[i...], as: UTF8.self)
    }

    var description: String {
        switch locator {
        case .whole: path
        case .line(let n): "\(path):\(n)"
        case .entry(let n): "\(path)#\(n)"
        }
    }
}
