import NIOCore

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

    static func write(_ bytes: ByteBuffer, directory: String, record: BatchRecord) throws(RecordError) {
        let path = directory + "/" + fileName(for: record)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw RecordError(.outputFailed, "\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        if let failure = OutputSink.writeAll(fd: fd, bytes) {
            throw RecordError(.outputFailed, "\(path): \(failure)")
        }
    }
}
