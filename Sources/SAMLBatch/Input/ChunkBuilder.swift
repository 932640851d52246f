import NIOCore

/// Gathers records into chunks on the reader's thread and hands each full chunk on; also
/// numbers the records and applies the shard.
struct ChunkBuilder {
    /// Where the next record's value is appended.
    var storage: ByteBuffer
    private var records: [BatchRecord] = []
    private var sequence = 0
    private var nextIndex = 0
    private let shard: Shard
    private let chunkRecords: Int
    private let chunkBytes: Int
    private let submit: (RecordChunk) -> Void

    init(shard: Shard, chunkRecords: Int, chunkBytes: Int, submit: @escaping (RecordChunk) -> Void) {
        self.shard = shard
        self.chunkRecords = chunkRecords
        self.chunkBytes = chunkBytes
        self.submit = submit
        storage = ByteBufferAllocator().buffer(capacity: chunkBytes + chunkBytes / 4)
    }

    /// Numbers the next record; returns its index when it belongs to this shard, `nil` when
    /// the record is to be skipped.
    mutating func claim() -> Int? {
        let index = nextIndex
        nextIndex += 1
        return shard.contains(index) ? index : nil
    }

    /// Adds a record whose value was just appended to ``storage`` from `payloadStart` on.
    mutating func add(index: Int, source: RecordSource, payloadStart: Int, meta: String = "{}", mvpd: String? = nil) {
        records.append(
            BatchRecord(index: index, source: source, payload: payloadStart..<storage.writerIndex, meta: meta, mvpd: mvpd))
        flushIfFull()
    }

    /// Adds a record that failed while being read.
    mutating func addFailure(index: Int, source: RecordSource, _ failure: RecordError, meta: String = "{}") {
        let at = storage.writerIndex
        records.append(BatchRecord(index: index, source: source, payload: at..<at, meta: meta, failure: failure))
        flushIfFull()
    }

    /// Numbers a failure record and adds it when it belongs to this shard.
    mutating func fail(_ source: RecordSource, _ failure: RecordError) {
        if let index = claim() { addFailure(index: index, source: source, failure) }
    }

    private mutating func flushIfFull() {
        if records.count >= chunkRecords || storage.readableBytes >= chunkBytes { flush() }
    }

    /// Hands on the records gathered so far.
    mutating func flush() {
        guard !records.isEmpty else { return }
        let chunk = RecordChunk(sequence: sequence, storage: storage, records: records)
        sequence += 1
        storage = ByteBufferAllocator().buffer(capacity: chunkBytes + chunkBytes / 4)
        records = []
        records.reserveCapacity(chunkRecords)
        submit(chunk)
    }
}
