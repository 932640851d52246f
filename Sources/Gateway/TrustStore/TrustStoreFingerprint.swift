import Crypto
import Foundation

/// A digest of everything a trust store load reads: each entry's name and each of its files'
/// names and bytes, and the files beside the entries (an aggregate metadata file), symlinks
/// followed (what the loader sees).
///
/// Contents rather than modification times: Kubernetes publishes a changed ConfigMap or Secret
/// by writing a fresh directory and swapping a symlink to it, so times and inodes change on
/// every publication, and a copy can keep an old time; the bytes are what matters. Entries
/// starting with `.` are skipped as the loader skips them (`..data` and the timestamped
/// directory Kubernetes keeps beside the entries).
struct TrustStoreFingerprint: Equatable, Sendable {
    let digest: [UInt8]

    /// `nil` when the directory cannot be read right now (mid-swap, removed): no verdict.
    static func compute(_ directory: String) -> TrustStoreFingerprint? {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else { return nil }
        var hasher = SHA256()
        func add(_ name: String, _ bytes: Data) {
            hasher.update(data: Array(name.utf8) + [0] + Array(String(bytes.count).utf8) + [0])
            hasher.update(data: bytes)
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            let entry = directory + "/" + name
            guard let files = try? fm.contentsOfDirectory(atPath: entry) else {
                // A file beside the entries (the aggregate metadata): its bytes count too.
                if let bytes = fm.contents(atPath: entry) { add(name, bytes) }
                continue
            }
            hasher.update(data: Array(name.utf8) + [0])
            for file in files.sorted() where !file.hasPrefix(".") {
                guard let bytes = fm.contents(atPath: entry + "/" + file) else { continue }
                add(file, bytes)
            }
            hasher.update(data: [1])
        }
        return TrustStoreFingerprint(digest: Array(hasher.finalize()))
    }
}
