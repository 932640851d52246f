/// `samlgate upstream --config FILE` could not be used; the message names the file and the key.
public struct ReferenceConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "wrong value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        @unknown default:
            return "unreadable"
        }
    }
}
