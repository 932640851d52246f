/// The test IdP could not generate keys, load them or sign.
public struct TestIdPError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
