/// A setting that cannot be used: unknown key, bad value, unreadable file, a demo that cannot be
/// set up. The message names the setting and where it came from (file and key, environment
/// variable or flag). Shared by the gateway, the reference upstream and the demo, whose
/// configuration failures are all of this one kind.
package struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }

    /// Where a decoded configuration file went wrong (the key path; never the value, which may
    /// be a secret).
    package static func describe(_ error: DecodingError) -> String {
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
