/// A setting that cannot be used: unknown key, bad value, unreadable file. The message names
/// the setting and where it came from (file, environment variable or flag).
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
