import NIOCore
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--out DIR`: writes one record's encoded value to `DIR/<index>-<source>.encoded`. The
/// zero-padded record index keeps names unique and sorted in input order; the source (with `/`
/// made `_`) says where the value came from.
enum EncodedFileWriter {
    static func fileName(for record: BatchRecord) -> String {
        let index = String(record.index + 1)
        let padded = String(repeating: "0", count: max(0, 8 - index.count)) + index
        var source = String(record.source.description.map { $0 == "/" ? "_" : $0 })
        // File names are limited to 255 bytes: keep the end of the source within 200 bytes.
        // One cut of whole characters (removing one at a time was quadratic in the length).
        let excess = source.utf8.count - 200
        var dropped = 0, characters = 0
        for character in source where dropped < excess {
            dropped += character.utf8.count
            characters += 1
        }
        source.removeFirst(characters)
        return "\(padded)-\(source).encoded"
    }

    /// Writes the file of a record that encoded (with `--verify`, only of one that also
    /// verified): its encoded value, whole. Returns the encoded length, counted also for a record
    /// that did not verify and gets no file.
    static func write(_ outcome: RecordOutcome, of record: BatchRecord, directory: RawPath) throws(RecordError) -> Int {
        guard case .encoded(_, let value, _, let error) = outcome else { return 0 }
        if error == nil { try write(value, directory: directory, record: record) }
        return value.readableBytes
    }

    /// Writes the file through an ``ExclusiveFile``: the names are predictable, so a link or
    /// file planted under one in a shared directory is replaced, never written through.
    private static func write(_ bytes: ByteBuffer, directory: RawPath, record: BatchRecord) throws(RecordError) {
        let file = try ExclusiveFile.create(directory.appending(Array(fileName(for: record).utf8)))
        if let failure = OutputSink.writeAll(fd: file.fd, bytes) {
            _ = file.finish(keep: false, sync: false)
            throw RecordError(.outputFailed, "\(file.finalPath): \(failure)")
        }
        if let failure = file.finish(keep: true, sync: false) { throw RecordError(.outputFailed, failure) }
    }
}
