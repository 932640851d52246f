import NIOCore

/// What a worker made of a chunk: the formatted output records, the counts, and one report
/// line per failed record (`source: code: message`).
struct ChunkResult: Sendable {
    var sequence: Int
    var output: ByteBuffer
    var statistics: BatchStatistics
    var reports: [String]
}
