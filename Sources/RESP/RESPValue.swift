import NIOCore

/// One RESP2 reply, as Redis sends it. Only what the replay store's commands can answer:
/// status (`+OK`), error (`-ERR …`), integer, bulk string (`$-1` is ``null``) and array.
package enum RESPValue: Sendable, Equatable {
    case simpleString(String)
    case error(String)
    case integer(Int64)
    case bulkString(ByteBuffer)
    case null
    case array([RESPValue])
}
