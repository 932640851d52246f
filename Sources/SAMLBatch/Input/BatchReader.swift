import NIOCore
import SAMLEncoding

/// Reads the inputs one after the other, in order, and turns them into records: a document is
/// one record, a JSON line is one, a HAR entry with a `SAMLResponse` is one. Gzip is undone on
/// the way. Problems inside an input become failure records at their location; an input that
/// cannot be read at all is also remembered for the exit status.
final class BatchReader {
    private var builder: ChunkBuilder
    private let reader: StreamReader
    private var scanner: JSONLineScanner
    private let maxRecordBytes: Int
    private let progress: BatchProgress
    private let shouldStop: () -> Bool
    private var baseBytes = 0
    private(set) var unreadableInputs: [String] = []

    /// `streamCapacity`: the stream buffer's first size (it grows as far as one record needs).
    init(
        options: BatchOptions, progress: BatchProgress, streamCapacity: Int = 1 << 20, shouldStop: @escaping () -> Bool,
        submit: @escaping (RecordChunk) -> Void
    ) {
        builder = ChunkBuilder(shard: options.shard, chunkRecords: options.chunkRecords, chunkBytes: options.chunkBytes, submit: submit)
        reader = StreamReader(source: FileByteSource(fd: -1, ownsDescriptor: false), capacity: streamCapacity)
        scanner = JSONLineScanner(field: options.field)
        maxRecordBytes = options.maxRecordBytes
        self.progress = progress
        self.shouldStop = shouldStop
    }

    var bytesRead: Int { baseBytes }

    func read<Entries: Sequence<InputExpander.Entry>>(_ entries: Entries) {
        for entry in entries {
            if shouldStop() { break }
            switch entry {
            case .unreadable(let path, let reason):
                unreadable(RecordSource.name(of: path), RecordError(.unreadableInput, reason))
            case .skipped(let path, let reason):
                builder.fail(RecordSource(path: RecordSource.name(of: path), locator: .whole), RecordError(.skippedInput, reason))
            case .standardInput:
                read(FileByteSource(fd: 0, ownsDescriptor: false), name: "-")
            case .file(let path, let inDirectory):
                let name = RecordSource.name(of: path)
                do {
                    read(try FileByteSource.open(path: path, regularOnly: inDirectory), name: name)
                } catch  where error.code == .skippedInput {
                    builder.fail(RecordSource(path: name, locator: .whole), error)
                } catch {
                    unreadable(name, error)
                }
            }
        }
        builder.flush()
    }

    /// Reads the one input `source` as a file called `name` is read (gzip undone, its kind told
    /// from the name and the first bytes), then hands on the records gathered: for
    /// ``BatchReaderFuzzing``, over a ``MemoryByteSource``.
    func readOne(_ source: any ByteSource, name: String) {
        read(source, name: name)
        builder.flush()
    }

    private func unreadable(_ name: String, _ error: RecordError) {
        unreadableInputs.append(name)
        builder.fail(RecordSource(path: name, locator: .whole), error)
    }

    private func read(_ file: any ByteSource, name: String) {
        defer {
            baseBytes += file.consumedBytes
            progress.bytesRead.store(baseBytes, ordering: .relaxed)
        }
        reader.reset(source: file)
        let kind: InputKind
        do {
            try fillPrefix()
            if InputKind.isGzip(name: name, prefix: reader.buffered) {
                let inflater = try GzipByteSource(inner: file, prefix: reader.buffered)
                reader.reset(source: inflater)
                try fillPrefix()
            }
            kind = InputKind.detect(name: name, prefix: reader.buffered)
            // A byte-order mark before JSON (Windows tools write one) is not part of the first
            // record; a document keeps it (the cookbook's business).
            let prefix = reader.buffered
            if kind != .document, prefix.count >= 3, prefix[0] == 0xEF, prefix[1] == 0xBB, prefix[2] == 0xBF {
                reader.consume(3)
            }
        } catch {
            if error.code == .unreadableInput {
                unreadable(name, error)
            } else {
                builder.fail(RecordSource(path: name, locator: .whole), error)
            }
            return
        }
        switch kind {
        case .document: readDocument(name)
        case .jsonLines: readLines(name, file: file)
        case .har: readHAR(name)
        }
    }

    /// Reads until a few bytes are buffered (pipes may deliver one byte at a time), for the
    /// gzip magic number and the kind detection.
    private func fillPrefix() throws(RecordError) {
        while reader.bufferedCount < 16, try reader.fill() {}
    }

    private func readDocument(_ name: String) {
        let source = RecordSource(path: name, locator: .whole)
        guard let index = builder.claim() else { return }
        do {
            switch try reader.readToEnd(limit: maxRecordBytes) {
            case .success(let bytes):
                let start = builder.storage.writerIndex
                builder.storage.writeBytes(bytes)
                builder.add(index: index, source: source, payloadStart: start)
            case .failure(let tooLarge):
                builder.addFailure(index: index, source: source, Self.tooLarge(tooLarge.length, limit: maxRecordBytes))
            }
        } catch {
            builder.addFailure(index: index, source: source, error)
        }
    }

    private func readLines(_ name: String, file: any ByteSource) {
        var number = 0
        while !shouldStop() {
            let line: StreamReader.Line
            do {
                line = try reader.nextLine(limit: maxRecordBytes)
            } catch {
                builder.fail(RecordSource(path: name, locator: .line(number + 1)), error)
                return
            }
            number += 1
            let source = RecordSource(path: name, locator: .line(number))
            switch line {
            case .end:
                return
            case .tooLong(let length):
                builder.fail(source, Self.tooLarge(length, limit: maxRecordBytes))
            case .line(let bytes):
                if Self.isBlank(bytes) { continue }
                guard let index = builder.claim() else { continue }
                let start = builder.storage.writerIndex
                do {
                    let carried = try scanner.scan(bytes, payload: &builder.storage)
                    builder.add(index: index, source: source, payloadStart: start, meta: carried.meta, mvpd: carried.mvpd)
                } catch {
                    builder.storage.moveWriterIndex(to: start)
                    builder.addFailure(index: index, source: source, error)
                }
            }
            progress.bytesRead.store(baseBytes + file.consumedBytes, ordering: .relaxed)
        }
    }

    private func readHAR(_ name: String) {
        let har = HARReader(reader: reader, limit: maxRecordBytes)
        var exchanges = 0
        var lastEntry = 0
        do throws(RecordError) {
            let entries = try har.forEachEntry { number, entry throws(RecordError) in
                lastEntry = number
                let source = RecordSource(path: name, locator: .entry(number))
                switch entry {
                case .tooLarge(let length):
                    exchanges += 1
                    builder.fail(source, Self.tooLarge(length, limit: maxRecordBytes))
                case .bytes(let bytes):
                    let exchange: HARExchange
                    do throws(RecordError) {
                        // JSON text is UTF-8; repairing it would turn a broken value into a good one.
                        if let bad = UTF8Validator.firstInvalidOffset(in: bytes) {
                            throw RecordError(.invalidJSON, "the entry is not valid UTF-8 (byte \(bad) of the entry)")
                        }
                        guard let found = try HARExchange.extract(from: try JSONValue.parse(bytes)) else { return }
                        exchange = found
                    } catch {
                        exchanges += 1
                        builder.fail(source, error)
                        return
                    }
                    exchanges += 1
                    guard let index = builder.claim() else { return }
                    let start = builder.storage.writerIndex
                    builder.storage.writeBytes(exchange.value)
                    builder.add(index: index, source: source, payloadStart: start, meta: exchange.meta, mvpd: exchange.mvpd)
                }
            }
            if exchanges == 0 {
                builder.fail(
                    RecordSource(path: name, locator: .whole),
                    RecordError(.harWithoutSAML, "none of the file's \(entries) entries carries a SAMLResponse"))
            }
        } catch {
            var failure = error
            if lastEntry > 0 { failure.message += " (after entry \(lastEntry))" }
            builder.fail(RecordSource(path: name, locator: .entry(lastEntry + 1)), failure)
        }
    }

    private static func tooLarge(_ length: Int, limit: Int) -> RecordError {
        RecordError(.recordTooLarge, "the record has \(length) bytes, over the \(limit)-byte limit (--max-record-bytes)")
    }

    private static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}

// MARK: - What an input holds

/// What one batch input holds, told from its name and first bytes (after gzip is undone).
enum InputKind: String, Sendable {
    /// One response: raw XML, base64, or the cookbook-encoded form. One record.
    case document
    /// JSON Lines: one object per line, the response in one field.
    case jsonLines
    /// An HTTP Archive: one record per request that carries a `SAMLResponse`.
    case har

    /// Decides from the file name (without `.gz`) first, then from the content: a `.har` name
    /// or an object whose first key is `log` is HAR; a `.jsonl`/`.ndjson` name or any other
    /// object is JSON Lines; everything else is a single document.
    static func detect(name: String, prefix: UnsafeRawBufferPointer) -> InputKind {
        let lowered = name.lowercased()
        let base = lowered.hasSuffix(".gz") ? String(lowered.dropLast(3)) : lowered
        if base.hasSuffix(".har") { return .har }
        if base.hasSuffix(".jsonl") || base.hasSuffix(".ndjson") { return .jsonLines }
        var i = 0
        JSONSyntax.skipWhitespace(prefix, &i)
        // A UTF-8 byte-order mark.
        if i + 2 < prefix.count, prefix[i] == 0xEF, prefix[i + 1] == 0xBB, prefix[i + 2] == 0xBF {
            i += 3
            JSONSyntax.skipWhitespace(prefix, &i)
        }
        guard i < prefix.count, prefix[i] == UInt8(ascii: "{") else { return .document }
        var key = i + 1
        JSONSyntax.skipWhitespace(prefix, &key)
        let log: [UInt8] = Array("\"log\"".utf8)
        if key + log.count <= prefix.count, Array(prefix[key..<(key + log.count)]) == log { return .har }
        return .jsonLines
    }

    static func isGzip(name: String, prefix: UnsafeRawBufferPointer) -> Bool {
        if prefix.count >= 2 { return prefix[0] == 0x1F && prefix[1] == 0x8B }
        return name.lowercased().hasSuffix(".gz")
    }
}

// MARK: - Fuzzing

/// The batch tool's reader on bytes in memory, for the `batch-readers` fuzz target (`Fuzz/`,
/// docs/robustness.md). Not used by `samlgate batch`.
///
/// **Why it is here.** ``BatchReader`` and the readers under it (`StreamReader` lines,
/// ``JSONLineScanner``, ``HARReader``, ``GzipByteSource``) are internal to this module and read a
/// ``ByteSource``; this type runs the real ``BatchReader`` on one input, over a
/// ``MemoryByteSource`` with a small read window and a small stream buffer so that buffer
/// boundaries fall everywhere, and returns how many records it made (failure records included).
/// It changes nothing the batch tool does.
@_spi(Fuzzing) public enum BatchReaderFuzzing {
    /// The largest record the reader holds (`--max-record-bytes`): a larger one is reported as
    /// `record_too_large`, never held.
    public static let recordLimit = 64 * 1024

    /// The input read as `fuzz.jsonl`: JSON Lines, every line through ``JSONLineScanner`` with
    /// `field` (gzip undone first when the input starts with its magic number).
    public static func jsonLines(_ input: UnsafeRawBufferPointer, field: String = "SAMLResponse", window: Int) -> Int {
        records(input, name: "fuzz.jsonl", field: field, window: window)
    }

    /// The input read as `fuzz.har`: an HTTP Archive, the entries of `log.entries` each parsed and
    /// searched for an exchange.
    public static func har(_ input: UnsafeRawBufferPointer, window: Int) -> Int {
        records(input, name: "fuzz.har", window: window)
    }

    /// The input read as `fuzz.gz`: inflated member by member, then read as what its content is
    /// (a document, JSON Lines or HAR). The inflated bytes are not held beyond a record, and
    /// deflate's ratio (about 1,000 to 1) bounds how many there are.
    public static func gunzip(_ input: UnsafeRawBufferPointer, window: Int) -> Int {
        records(input, name: "fuzz.gz", window: window)
    }

    private static func records(_ input: UnsafeRawBufferPointer, name: String, field: String = "SAMLResponse", window: Int) -> Int {
        var options = BatchOptions()
        options.field = field
        options.maxRecordBytes = recordLimit
        // Small chunks, so that chunk boundaries fall among the records too.
        options.chunkRecords = 8
        options.chunkBytes = 16 * 1024
        let progress = BatchProgress(mode: .none, interval: 1, totalBytes: { _ in nil }, write: { _ in })
        var records = 0
        let reader = BatchReader(options: options, progress: progress, streamCapacity: 4096, shouldStop: { false }) { chunk in
            records += chunk.records.count
        }
        reader.readOne(MemoryByteSource(input, window: window), name: name)
        return records
    }
}
