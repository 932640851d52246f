import NIOCore

extension ByteBuffer {
    /// Drops spaces, tabs, CRs and LFs from both ends of the readable bytes (a file's trailing
    /// newline, say) without copying.
    mutating func trimASCIIWhitespace() {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        while let first = getInteger(at: readerIndex, as: UInt8.self), isSpace(first) { moveReaderIndex(forwardBy: 1) }
        while readableBytes > 0, let last = getInteger(at: writerIndex - 1, as: UInt8.self), isSpace(last) {
            moveWriterIndex(to: writerIndex - 1)
        }
    }
}
