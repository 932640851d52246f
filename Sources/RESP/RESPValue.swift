// Redis's replies: a reply, the types a command's reply may have, and the decoder that reads
// them off a connection.

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

// MARK: - Reply types

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

// MARK: - Decoding

/// Reads RESP2 replies off the connection, one ``RESPValue`` per reply, resuming where it
/// stopped: each line and each bulk string is read once, when complete, and an unfinished array
/// is kept on a stack of frames; so a reply split over many reads costs what it would in one
/// (re-parsing a partial reply from its start on every read is quadratic, and a server dribbling
/// a large reply would hold the event loop — and every request on it — for seconds).
///
/// Bounded, so that a misbehaving server (or anyone on the path of a plain `redis://`) cannot make
/// the gateway buffer or work without limit: a reply's type must be one its command can have
/// (checked on its first byte), a reply is at most ``maximumReplyBytes`` including everything
/// nested, arrays nest at most ``maximumDepth`` deep with at most ``maximumArrayCount`` elements
/// each, a line is at most ``maximumLineLength``. Any of these is a ``RESPError/Kind/protocol``
/// error, after which the stream cannot be trusted and the connection is dropped.
///
/// Used by one ``RESPConnection`` on its event loop.
package struct RESPValueDecoder {
    /// Everything one reply may take, headers included: far above the replay store's replies
    /// (`+OK`, `$-1`), and the most the connection buffers for one.
    package static let maximumReplyBytes = 1 << 20
    package static let maximumArrayCount = 1024
    /// Arrays inside arrays: the replay store's commands answer with none, a generic command
    /// (`KEYS`) with one level, a cluster's `CLUSTER SLOTS` with three (Redis 7 adds a map of
    /// each node's metadata, its announced host name, inside the node's entry).
    package static let maximumDepth = 4
    /// Longest line (`+…`, `-…`, `:…`, a length) accepted before its CRLF.
    package static let maximumLineLength = 64 * 1024

    /// An array whose elements are still arriving.
    private struct Frame {
        var remaining: Int
        var elements: [RESPValue]
    }

    /// The arrays the current reply is inside, outermost first.
    private var frames: [Frame] = []
    /// Bytes of the current line already searched for its CR (not searched again).
    private var lineScanned = 0
    /// The length of a bulk string whose header is read and whose bytes are awaited.
    private var pendingBulk: Int?
    /// Bytes of the current reply consumed so far.
    private var replyBytes = 0

    package init() {}

    /// The next complete reply from `buffer`, consuming its bytes, or `nil` when more bytes are
    /// needed (whatever was complete is consumed and kept: the next call goes on from there).
    /// `accepting` is what the reply's command can be answered with.
    package mutating func next(from buffer: inout ByteBuffer, accepting: RESPReplyTypes) throws(RESPError) -> RESPValue? {
        // Invariant: `buffer`'s reader index is at the start of a line or of a pending bulk
        // string's bytes; everything before it belongs to `frames` or to earlier replies.
        while true {
            var value: RESPValue
            if let length = pendingBulk {
                guard buffer.readableBytes >= length + 2 else { return nil }
                let bytes = buffer.readSlice(length: length)!
                guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw RESPError(.protocol, "bulk string not ended by CRLF") }
                pendingBulk = nil
                value = .bulkString(bytes)
            } else {
                if frames.isEmpty, lineScanned == 0, let marker = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) {
                    // The reply's first byte: refused here, before anything of it is buffered.
                    guard let type = RESPReplyTypes(marker: marker) else {
                        throw RESPError(.protocol, "unknown reply type byte \(marker)")
                    }
                    guard accepting.contains(type) else { throw RESPError(.protocol, "a reply of a type the command cannot have") }
                }
                guard let line = try readLine(&buffer) else { return nil }
                guard let header = try header(line) else { continue }
                value = header
            }
            // A complete value: it ends the reply, or fills arrays from the innermost out.
            while !frames.isEmpty {
                frames[frames.count - 1].elements.append(value)
                frames[frames.count - 1].remaining -= 1
                guard frames[frames.count - 1].remaining == 0 else { break }
                value = .array(frames.removeLast().elements)
            }
            if frames.isEmpty {
                replyBytes = 0
                return value
            }
        }
    }

    /// The value a line is, or `nil` when it opens a bulk string or an array (then awaited).
    private mutating func header(_ line: ByteBuffer) throws(RESPError) -> RESPValue? {
        var line = line
        guard let marker = line.readInteger(as: UInt8.self) else { throw RESPError(.protocol, "an empty reply line") }
        guard RESPReplyTypes(marker: marker) != nil else { throw RESPError(.protocol, "unknown reply type byte \(marker)") }
        let text = line.readString(length: line.readableBytes)!
        switch marker {
        case UInt8(ascii: "+"):
            return .simpleString(text)
        case UInt8(ascii: "-"):
            return .error(text)
        case UInt8(ascii: ":"):
            guard let number = Int64(text) else { throw RESPError(.protocol, "integer reply is not a number") }
            return .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1, length <= Self.maximumReplyBytes else {
                throw RESPError(.protocol, "bulk string length out of range")
            }
            if length == -1 { return .null }
            try count(length + 2)
            pendingBulk = length
            return nil
        default:
            guard let count = Int(text), count >= -1, count <= Self.maximumArrayCount else {
                throw RESPError(.protocol, "array length out of range")
            }
            if count == -1 { return .null }
            if count == 0 { return .array([]) }
            guard frames.count < Self.maximumDepth else { throw RESPError(.protocol, "arrays nested too deep") }
            frames.append(Frame(remaining: count, elements: []))
            frames[frames.count - 1].elements.reserveCapacity(min(count, 64))
            return nil
        }
    }

    /// Counts `bytes` more of the current reply against ``maximumReplyBytes``.
    private mutating func count(_ bytes: Int) throws(RESPError) {
        replyBytes += bytes
        guard replyBytes <= Self.maximumReplyBytes else { throw RESPError(.protocol, "reply larger than \(Self.maximumReplyBytes) bytes") }
    }

    /// The line up to the next CRLF (both consumed, the CRLF not returned), or `nil` when no CRLF
    /// has arrived yet; the bytes searched are remembered, so a line dribbled byte by byte is
    /// searched once.
    private mutating func readLine(_ buffer: inout ByteBuffer) throws(RESPError) -> ByteBuffer? {
        let view = buffer.readableBytesView
        let start = view.startIndex + lineScanned
        guard let cr = view[start...].firstIndex(of: UInt8(ascii: "\r")) else {
            lineScanned = view.count
            if view.count > Self.maximumLineLength { throw RESPError(.protocol, "reply line too long") }
            return nil
        }
        let length = cr - view.startIndex
        guard length <= Self.maximumLineLength else { throw RESPError(.protocol, "reply line too long") }
        guard buffer.readableBytes >= length + 2 else {
            lineScanned = length
            return nil
        }
        let line = buffer.readSlice(length: length)!
        guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw RESPError(.protocol, "reply line not ended by CRLF") }
        lineScanned = 0
        try count(length + 2)
        return line
    }
}
