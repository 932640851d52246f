import Crypto
import Foundation
import ServiceLifecycle

/// Reloads the trust store when its files change (setting `trust-store-poll`), as SIGHUP does.
///
/// Kubernetes updates a mounted ConfigMap or Secret by swapping a symlink and sends no signal;
/// polling a digest of the store's contents (``TrustStoreFingerprint``) works for that, for a
/// renamed directory and for plain edits alike, where inotify on a symlinked tree would not.
/// A store that fails to load keeps the previous one (counted, logged) and is not retried until
/// its contents change again, so a broken publication is reported once, not every period.
struct TrustStorePollService: Service {
    let core: GatewayCore
    let interval: Duration

    func run() async throws {
        guard let directory = core.trustStore.directory else { return }
        try? await cancelWhenGracefulShutdown {
            var seen = TrustStoreFingerprint.compute(directory)
            while true {
                try await Task.sleep(for: interval)
                guard let now = TrustStoreFingerprint.compute(directory), now != seen else { continue }
                seen = now
                core.logger.notice("trust store changed on disk; reloading", metadata: ["trigger": "poll"])
                core.reloadTrustStore()
            }
        }
    }
}

// MARK: - What the poll compares

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
