import NIOCore

/// A command as RESP sends it: an array of bulk strings. Built once, written as is; the
/// arguments are bytes, never logged.
package struct RESPCommand: Sendable {
    package let arguments: [ByteBuffer]
    /// The replies this command can have, when it says (`nil`: any). Any other reply means the
    /// connection is out of step with its commands or the server is not what it claims: the
    /// command fails with ``RESPError/Kind/protocol`` and the connection is dropped.
    package let acceptsReply: (@Sendable (RESPValue) -> Bool)?

    package init(_ arguments: [ByteBuffer], acceptsReply: (@Sendable (RESPValue) -> Bool)? = nil) {
        precondition(!arguments.isEmpty, "a command has a name")
        self.arguments = arguments
        self.acceptsReply = acceptsReply
    }

    package init(_ arguments: String...) {
        self.init(arguments.map { ByteBuffer(string: $0) })
    }

    /// `*<n>\r\n` then `$<len>\r\n<bytes>\r\n` per argument.
    package func write(into buffer: inout ByteBuffer) {
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

    /// `SET key value NX PX ms`: records `key` for `milliseconds` (at least 1) unless it exists.
    /// Redis answers `+OK` when it set the key, a null bulk string when it existed; anything
    /// else fails the command as a protocol error.
    ///
    /// A lifetime rather than an instant (`PXAT`): an instant is read on Redis's clock, so a
    /// Redis clock ahead of the sender's would end the record early and reopen a replay window;
    /// a lifetime counts on Redis from when the command arrives, and only the sender's clock
    /// decides how long. It also needs only Redis ≥ 2.6.12 (`PXAT` needs 6.2).
    package static func setIfAbsent(key: ByteBuffer, value: ByteBuffer, expiresInMilliseconds: Int64) -> RESPCommand {
        RESPCommand(
            [
                ByteBuffer(string: "SET"), key, value, ByteBuffer(string: "NX"), ByteBuffer(string: "PX"),
                ByteBuffer(string: String(max(1, expiresInMilliseconds))),
            ],
            acceptsReply: { reply in reply == .simpleString("OK") || reply == .null })
    }

    package static let ping = RESPCommand("PING")
}
