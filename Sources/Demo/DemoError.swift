/// The demo could not start (the walk itself reports failed steps in the transcript).
public struct DemoError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
