import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes a fetched copy into `metadata-cache` so that no reader — a reload, a restarted
/// gateway, `samlgate trust list` — ever sees half a file: the bytes go to a fresh temporary
/// name in the same directory (opened `O_EXCL|O_NOFOLLOW`, so nothing planted there is
/// followed), are flushed to disk, and are renamed over the old copy.
enum MetadataCacheFile {
    static func write(_ bytes: [UInt8], to path: String) throws(MetadataFetchFailure) {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw MetadataFetchFailure(.cache, "cannot create \(directory)")
        }
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw MetadataFetchFailure(.cache, "cannot create a file in \(directory) (errno \(errno))") }
        var written = 0
        var failed = false
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                written += count
            }
        }
        if !failed && fsync(descriptor) != 0 { failed = true }
        let error = errno
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw MetadataFetchFailure(.cache, "cannot write \(path) (errno \(failed ? error : errno))")
        }
    }
}
