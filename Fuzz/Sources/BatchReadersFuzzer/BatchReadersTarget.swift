import FuzzSupport
@_spi(Fuzzing) import SAMLBatch

/// Target `batch-readers`.
///
/// Invariant: the batch tool's reader (`BatchReader`, as `samlgate batch` runs it) on any input
/// read as JSON Lines (each line through the record scanner), as HAR (the entries of
/// `log.entries`, each parsed and searched for an exchange) or as gzip (every member inflated,
/// then read as what its content is) turns it into records, failure records included: no crash,
/// no hang, memory bounded (records over 64 KB are reported, not held).
///
/// Input: byte 0 chooses how the input is read (modulo 3: as `.jsonl`, `.har` or `.gz`; gzip's
/// magic number is followed in all three) and byte 1 the read window (1…256 bytes per read, so
/// buffer boundaries fall everywhere); the rest is the input.
@main
enum BatchReadersTarget {
    static func main() {
        FuzzDriver.run { data, size in BatchReadersTarget.testOne(data, size) }
    }

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = FuzzDriver.input(data, size)
        guard bytes.count >= 2 else { return 0 }
        let input = UnsafeRawBufferPointer(rebasing: bytes[2...])
        let window = Int(bytes[1]) + 1
        switch bytes[0] % 3 {
        case 0: _ = BatchReaderFuzzing.jsonLines(input, window: window)
        case 1: _ = BatchReaderFuzzing.har(input, window: window)
        default: _ = BatchReaderFuzzing.gunzip(input, window: window)
        }
        return 0
    }
}
