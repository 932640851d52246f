/// The RESP2 reply types a command can be answered with, checked on the first byte of its reply:
/// a reply of another type is refused before any of it is buffered, so a server answering `SET`
/// with an endless array costs one byte, not a parse.
package struct RESPReplyTypes: OptionSet, Sendable {
    package let rawValue: UInt8

    package init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `+…`
    package static let simpleString = RESPReplyTypes(rawValue: 1 << 0)
    /// `-…`: any command may be refused.
    package static let error = RESPReplyTypes(rawValue: 1 << 1)
    /// `:…`
    package static let integer = RESPReplyTypes(rawValue: 1 << 2)
    /// `$…`, including the null reply `$-1`.
    package static let bulkString = RESPReplyTypes(rawValue: 1 << 3)
    /// `*…`, including the null array `*-1`.
    package static let array = RESPReplyTypes(rawValue: 1 << 4)

    package static let any: RESPReplyTypes = [.simpleString, .error, .integer, .bulkString, .array]

    /// The type a reply's first byte announces; `nil` for a byte that begins no RESP2 reply.
    package init?(marker: UInt8) {
        switch marker {
        case UInt8(ascii: "+"): self = .simpleString
        case UInt8(ascii: "-"): self = .error
        case UInt8(ascii: ":"): self = .integer
        case UInt8(ascii: "$"): self = .bulkString
        case UInt8(ascii: "*"): self = .array
        default: return nil
        }
    }
}
