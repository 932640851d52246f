/// Where a batch input's bytes come from: a file, standard input, or a decompressor over one of
/// those. Reads go straight into the caller's buffer.
protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes; returns 0 only at the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int
    /// Bytes taken from the underlying file so far (compressed bytes for gzip), for progress.
    var consumedBytes: Int { get }
}
