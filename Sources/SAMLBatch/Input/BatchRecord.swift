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
