import NIOCore

/// A run of consecutive records handed to one worker at once: one storage buffer for all their
/// values, so a chunk costs a couple of allocations however many records it holds.
struct RecordChunk: Sendable {
    /// Position in the output order.
    var sequence: Int
    var storage: ByteBuffer
    var records: [BatchRecord]
}
