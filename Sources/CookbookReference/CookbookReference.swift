import Foundation

/// The backend cookbook's Foundation code, verbatim: the oracle every fast path is compared with.
/// Test-only (the encoder's tests and the `encode` command's), in a target of its own so that
/// both can use it without the library tests building the program.
package enum CookbookReference {
    package static func encode(_ samlAttributeQueryResponse: String) -> String {
        var s = samlAttributeQueryResponse
        s = s.replacingOccurrences(of: "[ \\t]+", with: " ", options: .regularExpression)
        s = s.components(separatedBy: CharacterSet.newlines).joined(separator: "")
        s = s.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines)
        s = s.data(using: .utf8)!.base64EncodedString(options: [])
        s = s.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "!*'();:@&=+$,/?%#[]").inverted)!
        return s
    }

    /// Steps 1–3 only, to compare the normalization stage on its own.
    package static func normalize(_ samlAttributeQueryResponse: String) -> String {
        var s = samlAttributeQueryResponse
        s = s.replacingOccurrences(of: "[ \\t]+", with: " ", options: .regularExpression)
        s = s.components(separatedBy: CharacterSet.newlines).joined(separator: "")
        s = s.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines)
        return s
    }
}
