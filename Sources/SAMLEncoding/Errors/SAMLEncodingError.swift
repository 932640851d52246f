/// A failure of the encoding core: a stable ``ErrorCode`` for machines and a message for people.
///
/// The code is what HTTP error bodies, CLI output, metric labels and tests use; the message may
/// change between releases. `offset`, when set, is the byte offset in the input where the problem
/// was found, so an operator can locate it in a capture.
public struct SAMLEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s (this module's in `ErrorCode+Encoding.swift`).
    public typealias Code = ErrorCode

    /// The stable, machine-readable reason.
    public var code: ErrorCode
    /// A human-readable explanation, never containing the input's content.
    public var message: String
    /// Byte offset of the first offending byte in the input, when the problem has a location.
    public var offset: Int?
    /// Where the error was raised.
    public var location: ErrorLocation

    public init(_ code: ErrorCode, _ message: String, offset: Int? = nil, fileID: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.offset = offset
        self.location = ErrorLocation(fileID: fileID, line: line)
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var debugDescription: String { "\(code.rawValue): \(message) (\(location))" }

    public static func == (lhs: SAMLEncodingError, rhs: SAMLEncodingError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
