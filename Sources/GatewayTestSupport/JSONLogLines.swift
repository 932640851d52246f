import Foundation
import Testing

/// What `--log-format json` writes: one JSON object per line.
package enum JSONLogLines {
    /// Parses every line of `text` as a log object; records an issue for any that is not.
    package static func objects(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON line: \(line)", sourceLocation: sourceLocation)
            if let object {
                for key in ["ts", "level", "label", "msg"] {
                    #expect(object[key] is String, "\(key) missing: \(line)", sourceLocation: sourceLocation)
                }
            }
            return object
        }
    }
}
