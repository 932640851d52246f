// Records on their way from the reader to the workers: one record, where it came from, the chunk
// that carries a run of them, and the builder that gathers them into chunks.

import NIOCore
import ServerSupport

/// A run of consecutive records handed to one worker at once: one storage buffer for all their
/// values, so a chunk costs a couple of allocations however many records it holds.
struct RecordChunk: Sendable {
    /// Position in the output order.
    var sequence: Int
    var storage: ByteBuffer
    var records: [BatchRecord]
}

// MARK: - Records

/// One record on its way from a reader to a worker: the response bytes live in the chunk's
/// shared storage, this holds where, and what to carry along.
struct BatchRecord: Sendable {
    /// Position among all records of the run, before sharding (names `--out DIR` files).
    var index: Int
    var source: RecordSource
    /// The response value's bytes in ``RecordChunk/storage``.
    var payload: Range<Int>
    /// The carried fields as a JSON object (`{}` when there are none).
    var meta: String
    /// The MVPD the record names, to pick its trust with `--verify`.
    var mvpd: String?
    /// A problem found while reading (bad JSON, truncated gzip, …): the record is reported with
    /// it and nothing else is done.
    var failure: RecordError?
}

/// Where a record came from, as the output's `source` shows it: the path, `path:LINE` for a
/// JSON Lines record, `path#N` for the N-th entry of a HAR file (both 1-based).
///
/// Distinct records never share a source: the path is spelled with ``RawPath/description``
/// (injective, printable), and a path that itself ends in `:DIGITS` or `#DIGITS` has that `:` or
/// `#` escaped (`\x3A`, `\x23`), so a document named `a.jsonl:1` is not line 1 of `a.jsonl`.
struct RecordSource: Sendable, CustomStringConvertible {
    enum Locator: Sendable {
        case whole
        case line(Int)
        case entry(Int)
    }

    /// The path as printed (see ``name(of:)``).
    var path: String
    var locator: Locator

    /// The printed name of an input, computed once per input.
    static func name(of path: RawPath) -> String {
        let text = path.description
        let utf8 = Array(text.utf8)
        var i = utf8.count
        while i > 0, utf8[i - 1] >= UInt8(ascii: "0"), utf8[i - 1] <= UInt8(ascii: "9") { i -= 1 }
        guard i > 0, i < utf8.count, utf8[i - 1] == UInt8(ascii: ":") || utf8[i - 1] == UInt8(ascii: "#") else { return text }
        let escape = utf8[i - 1] == UInt8(ascii: ":") ? "\\x3A" : "\\x23"
        return String(decoding: utf8[..<(i - 1)], as: UTF8.self) + escape + String(decoding: utf8[i...], as: UTF8.self)
    }

    var description: String {
        switch locator {
        case .whole: path
        case .line(let n): "\(path):\(n)"
        case .entry(let n): "\(path)#\(n)"
        }
    }
}

// MARK: - Gathering records into chunks

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
