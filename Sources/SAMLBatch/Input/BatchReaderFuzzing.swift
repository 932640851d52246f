import NIOCore
import SAMLEncoding

/// The batch tool's streaming readers on bytes in memory, for the `batch-readers` fuzz target
/// (`Fuzz/`, docs/robustness.md). Not used by `samlgate batch`.
///
/// **Why it is here.** The readers (`StreamReader` lines, ``JSONLineScanner``, ``HARReader``,
/// ``GzipByteSource``) are internal to this module and work on a ``ByteSource``; this type runs
/// each exactly as ``BatchReader`` does, over a ``MemoryByteSource`` with a small read window
/// and a small stream buffer so buffer boundaries fall everywhere, and returns how much it read.
/// It changes nothing the batch tool does.
@_spi(Fuzzing) public enum BatchReaderFuzzing {
    /// The largest record the readers hold (records over it are skipped as `tooLarge`).
    public static let recordLimit = 64 * 1024

    /// JSON Lines: every line through ``JSONLineScanner`` with `field`; returns the records
    /// scanned (accepted or refused).
    public static func jsonLines(_ input: UnsafeRawBufferPointer, field: String = "SAMLResponse", window: Int) -> Int {
        let reader = StreamReader(source: MemoryByteSource(input, window: window), capacity: 4096)
        var scanner = JSONLineScanner(field: field)
        var payload = ByteBufferAllocator().buffer(capacity: 1024)
        var records = 0
        do throws(RecordError) {
            while true {
                switch try reader.nextLine(limit: recordLimit) {
                case .line(let line):
                    records += 1
                    payload.clear()
                    _ = try? scanner.scan(line, payload: &payload)
                case .tooLong:
                    records += 1
                case .end:
                    return records
                }
            }
        } catch {
            return records
        }
    }

    /// HAR: the entries of `log.entries`, each parsed and searched for an exchange as the batch
    /// tool does; returns the entries seen, or -1 when the file's structure is refused.
    public static func har(_ input: UnsafeRawBufferPointer, window: Int) -> Int {
        let reader = StreamReader(source: MemoryByteSource(input, window: window), capacity: 4096)
        let har = HARReader(reader: reader, limit: recordLimit)
        do throws(RecordError) {
            return try har.forEachEntry { _, entry throws(RecordError) in
                guard case .bytes(let bytes) = entry, UTF8Validator.firstInvalidOffset(in: bytes) == nil,
                    let value = try? JSONValue.parse(bytes)
                else { return }
                _ = try? HARExchange.extract(from: value)
            }
        } catch {
            return -1
        }
    }

    /// gzip: inflates every member, stopping after `outputLimit` bytes; returns the bytes
    /// inflated, or -1 when the stream is refused.
    public static func gunzip(_ input: UnsafeRawBufferPointer, window: Int, outputLimit: Int = 1 << 22) -> Int {
        let source = MemoryByteSource(input, window: window)
        let prefixCount = min(input.count, 2)
        let prefix = UnsafeRawBufferPointer(rebasing: input[..<prefixCount])
        // The prefix is handed over as BatchReader does (sniffed bytes already read from the source).
        let skipped = UnsafeMutableRawBufferPointer.allocate(byteCount: max(prefixCount, 1), alignment: 1)
        defer { skipped.deallocate() }
        _ = try? source.read(into: UnsafeMutableRawBufferPointer(rebasing: skipped[..<prefixCount]))
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 16)
        defer { output.deallocate() }
        var total = 0
        do throws(RecordError) {
            let inflater = try GzipByteSource(inner: source, prefix: prefix)
            while total < outputLimit {
                let count = try inflater.read(into: output)
                if count == 0 { break }
                total += count
            }
            return total
        } catch {
            return -1
        }
    }
}
