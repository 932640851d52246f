import Foundation

/// One HTTP answer as the demo saw it.
package struct DemoReply: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package var text: String { String(decoding: body, as: UTF8.self) }

    package var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A top-level string (or number) field.
    package func string(_ name: String) -> String? {
        guard let value = json?[name] else { return nil }
        if let text = value as? String { return text }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// The enhanced error `code`.
    package var code: String? { string("code") }
}
