import Crypto
import Foundation

/// A digest of everything a trust store load reads: each entry's name and each of its files'
/// names and bytes, symlinks followed (what the loader sees).
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
        for name in names.sorted() where !name.hasPrefix(".") {
            let entry = directory + "/" + name
            hasher.update(data: Array(name.utf8) + [0])
            guard let files = try? fm.contentsOfDirectory(atPath: entry) else { continue }
            for file in files.sorted() where !file.hasPrefix(".") {
                guard let bytes = fm.contents(atPath: entry + "/" + file) else { continue }
                hasher.update(data: Array(file.utf8) + [0])
                hasher.update(data: Array(String(bytes.count).utf8) + [0])
                hasher.update(data: bytes)
            }
            hasher.update(data: [1])
        }
        return TrustStoreFingerprint(digest: Array(hasher.finalize()))
    }
}
