/// A trust store could not be loaded (missing directory, unreadable or invalid PEM).
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
