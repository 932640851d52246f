import NIOCore

/// A command as RESP sends it: an array of bulk strings. Built once, written as is; the
/// arguments are bytes, never logged.
public struct RESPCommand: Sendable {
    public let arguments: [ByteBuffer]

    public init(_ arguments: [ByteBuffer]) {
        precondition(!arguments.isEmpty, "a command has a name")
        self.arguments = arguments
    }

    public init(_ arguments: String...) {
        self.init(arguments.map { ByteBuffer(string: $0) })
    }

    /// `*<n>\r\n` then `$<len>\r\n<bytes>\r\n` per argument.
    public func write(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "*"))
        buffer.writeString(String(arguments.count))
        buffer.writeStaticString("\r\n")
        for argument in arguments {
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeString(String(argument.readableBytes))
            buffer.writeStaticString("\r\n")
            buffer.writeImmutableBuffer(argument)
            buffer.writeStaticString("\r\n")
        }
    }

    /// `SET key value NX PXAT ms`: records `key` until the Unix time `milliseconds` unless it
    /// exists. Redis answers `+OK` when it set the key, a null bulk string when it existed.
    public static func setIfAbsent(key: ByteBuffer, value: ByteBuffer, expiresAtMilliseconds: Int64) -> RESPCommand {
        RESPCommand([ByteBuffer(string: "SET"), key, value, ByteBuffer(string: "NX"), ByteBuffer(string: "PXAT"),
                     ByteBuffer(string: String(expiresAtMilliseconds))])
    }

    public static let ping = RESPCommand("PING")
}
