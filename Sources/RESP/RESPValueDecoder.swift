import NIOCore

/// Reads RESP2 replies off the connection, one ``RESPValue`` per reply.
///
/// A reply is parsed from the start of the buffer each time bytes arrive and consumed only once
/// complete: the store's replies are a few bytes, so re-reading a partial one costs nothing and
/// keeps the parser free of state. Sizes are bounded (a bulk string above ``maximumBulkLength``,
/// an array above ``maximumArrayCount`` elements or nested deeper than ``maximumDepth`` is a
/// protocol error) so a misbehaving server cannot make the gateway buffer without limit.
struct RESPValueDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    static let maximumBulkLength = 1 << 20
    static let maximumArrayCount = 1024
    static let maximumDepth = 4
    /// Longest line (`+…`, `-…`, `:…`, a length) accepted before its CRLF.
    static let maximumLineLength = 64 * 1024

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        var view = buffer
        guard let value = try Self.parse(&view, depth: 0) else { return .needMoreData }
        buffer.moveReaderIndex(to: view.readerIndex)
        context.fireChannelRead(wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    /// One value from the reader index, or `nil` when it is not complete yet (the reader index
    /// is then meaningless: the caller starts again from its own copy).
    static func parse(_ buffer: inout ByteBuffer, depth: Int) throws(RESPError) -> RESPValue? {
        guard let marker = buffer.readInteger(as: UInt8.self) else { return nil }
        guard let line = try readLine(&buffer) else { return nil }
        switch marker {
        case UInt8(ascii: "+"):
            return .simpleString(line)
        case UInt8(ascii: "-"):
            return .error(line)
        case UInt8(ascii: ":"):
            guard let number = Int64(line) else { throw RESPError(.protocol, "integer reply is not a number") }
            return .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Int(line), length >= -1, length <= maximumBulkLength else {
                throw RESPError(.protocol, "bulk string length out of range")
            }
            if length == -1 { return .null }
            guard buffer.readableBytes >= length + 2 else { return nil }
            let bytes = buffer.readSlice(length: length)!
            guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw RESPError(.protocol, "bulk string not ended by CRLF") }
            return .bulkString(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(line), count >= -1, count <= maximumArrayCount else {
                throw RESPError(.protocol, "array length out of range")
            }
            if count == -1 { return .null }
            guard depth < maximumDepth else { throw RESPError(.protocol, "arrays nested too deep") }
            var elements: [RESPValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                guard let element = try parse(&buffer, depth: depth + 1) else { return nil }
                elements.append(element)
            }
            return .array(elements)
        default:
            throw RESPError(.protocol, "unknown reply type byte \(marker)")
        }
    }

    /// The text up to the next CRLF (consumed), or `nil` when no CRLF has arrived yet.
    private static func readLine(_ buffer: inout ByteBuffer) throws(RESPError) -> String? {
        let view = buffer.readableBytesView
        guard let cr = view.firstIndex(of: UInt8(ascii: "\r")) else {
            if view.count > maximumLineLength { throw RESPError(.protocol, "reply line too long") }
            return nil
        }
        let length = cr - view.startIndex
        guard length <= maximumLineLength else { throw RESPError(.protocol, "reply line too long") }
        guard buffer.readableBytes >= length + 2 else { return nil }
        let line = buffer.readString(length: length)!
        guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw RESPError(.protocol, "reply line not ended by CRLF") }
        return line
    }
}
