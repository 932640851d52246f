/// Where in samlgate's own sources an error was raised (`#fileID` and `#line`), for the people
/// reading a debug description: never part of a code, a message or an HTTP body.
public struct ErrorLocation: Sendable, CustomStringConvertible {
    public let fileID: String
    public let line: Int

    public init(fileID: String, line: Int) {
        self.fileID = fileID
        self.line = line
    }

    public var description: String { "\(fileID):\(line)" }
}
