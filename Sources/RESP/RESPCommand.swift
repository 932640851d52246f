import NIOCore

/// A command as RESP sends it: an array of bulk strings. Built once, written as is; the
/// arguments are bytes, never logged.
package struct RESPCommand: Sendable {
    package let arguments: [ByteBuffer]
    /// The replies this command can have, when it says (`nil`: any). Any other reply means the
    /// connection is out of step with its commands or the server is not what it claims: the
    /// command fails with ``RESPError/Kind/protocol`` and the connection is dropped.
    package let acceptsReply: (@Sendable (RESPValue) -> Bool)?
    /// The reply types this command can be answered with, checked by the decoder on the reply's
    /// first byte (``RESPValueDecoder``): another type fails the command with
    /// ``RESPError/Kind/protocol`` before anything of the reply is buffered.
    package let replyTypes: RESPReplyTypes

    /// - Parameter replyTypes: `nil`: ``replyTypes(of:)`` for the command's name.
    package init(_ arguments: [ByteBuffer], replyTypes: RESPReplyTypes? = nil, acceptsReply: (@Sendable (RESPValue) -> Bool)? = nil) {
        precondition(!arguments.isEmpty, "a command has a name")
        self.arguments = arguments
        self.replyTypes = replyTypes ?? Self.replyTypes(of: String(buffer: arguments[0]))
        self.acceptsReply = acceptsReply
    }

    /// What the commands this client sends itself can be answered with: `AUTH`, `SELECT` and
    /// `PING` (without an argument) a status or an error; `SET` (with `NX`, or `GET`) also a bulk
    /// string or its null. None of them answers with an array, so an array for one of them is a
    /// server out of step or hostile. Any other command: any type.
    package static func replyTypes(of name: String) -> RESPReplyTypes {
        switch name.uppercased() {
        case "AUTH", "SELECT", "PING": [.simpleString, .error]
        case "SET": [.simpleString, .error, .bulkString]
        default: .any
        }
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
            replyTypes: [.simpleString, .error, .bulkString],
            acceptsReply: { reply in reply == .simpleString("OK") || reply == .null })
    }

    package static let ping = RESPCommand("PING")
}
