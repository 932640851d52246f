import Foundation

/// One HTTP answer as the demo saw it.
public struct DemoReply: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }

    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A top-level string (or number) field.
    public func string(_ name: String) -> String? {
        guard let value = json?[name] else { return nil }
        if let text = value as? String { return text }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// The enhanced error `code`.
    public var code: String? { string("code") }
}
