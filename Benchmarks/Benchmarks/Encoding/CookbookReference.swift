import Foundation

/// The backend cookbook's Foundation code, verbatim (the same oracle as in the tests): the
/// baseline every encoding figure is compared with.
enum CookbookReference {
    static func encode(_ samlAttributeQueryResponse: String) -> String {
        var s = samlAttributeQueryResponse
        s = s.replacingOccurrences(of: "[ \\t]+", with: " ", options: .regularExpression)
        s = s.components(separatedBy: CharacterSet.newlines).joined(separator: "")
        s = s.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines)
        s = s.data(using: .utf8)!.base64EncodedString(options: [])
        s = s.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "!*'();:@&=+$,/?%#[]").inverted)!
        return s
    }
}
