import FuzzSupport
@_spi(Fuzzing) import SAMLBatch

/// Target `batch-readers`.
///
/// Invariant: the batch tool's streaming readers — JSON Lines (each line through the record
/// scanner), HAR (the entries of `log.entries`, each parsed and searched for an exchange) and
/// gzip (every member inflated) — on any input return a count or a refusal: no crash, no hang,
/// memory bounded (records over 64 KB are skipped, not held; gzip output is capped here at 4 MB).
///
/// Input: byte 0 chooses the reader (modulo 3: JSON Lines, HAR, gzip) and byte 1 the read window
/// (1…256 bytes per read, so buffer boundaries fall everywhere); the rest is the input.
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
