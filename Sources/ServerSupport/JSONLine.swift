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
