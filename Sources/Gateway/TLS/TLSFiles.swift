import Crypto
import Foundation
import Synchronization

/// Why TLS files do not load, in words naming the setting and the file.
struct TLSLoadError: Error {
    let message: String
}

/// What is built from a few PEM files (a TLS context and what is reported of it), and the rule
/// for building it again that the listener's TLS and the upstreams' share: a SHA-256 of the
/// files' bytes says whether anything changed (a plain rewrite, certbot's, and Kubernetes'
/// symlink swap alike); what fails to build keeps the previous value serving and is not tried
/// again until the bytes change — unless asked to (SIGHUP: a certificate refused as not yet
/// valid becomes loadable with time alone).
final class TLSFiles<Value: Sendable>: Sendable {
    /// What a reload did.
    enum Reload {
        /// The same bytes as the value's (or as the refused ones'): nothing done.
        case unchanged
        case loaded(Value)
        /// The previous value still serves; why the new files were refused.
        case refused(String)
    }

    private struct State: Sendable {
        var value: Value
        var digest: [UInt8]
        var failure: String?
    }

    private let paths: [String?]
    private let build: @Sendable () throws(TLSLoadError) -> Value
    private let state: Mutex<State>
    /// One reload at a time (a poll and a SIGHUP may meet): each sees the other's result.
    private let reloading = Mutex<Void>(())

    /// Builds the first value; files that do not load are the caller's start-up error.
    init(paths: [String?], build: @escaping @Sendable () throws(TLSLoadError) -> Value) throws(TLSLoadError) {
        self.paths = paths
        self.build = build
        let digest = Self.digest(paths)
        state = Mutex(State(value: try build(), digest: digest))
    }

    /// The value new connections use.
    var value: Value {
        state.withLock { $0.value }
    }

    /// Why the last reload was refused, until one succeeds.
    var failure: String? {
        state.withLock { $0.failure }
    }

    /// Builds the value again when the files' bytes changed (or, `retryingRefused`, when the last
    /// bytes were refused).
    func reload(retryingRefused: Bool) -> Reload {
        reloading.withLock { _ in reloadAlone(retryingRefused: retryingRefused) }
    }

    private func reloadAlone(retryingRefused: Bool) -> Reload {
        let digest = Self.digest(paths)
        let (current, refused) = state.withLock { ($0.digest, $0.failure != nil) }
        guard digest != current || (retryingRefused && refused) else { return .unchanged }
        do throws(TLSLoadError) {
            let value = try build()
            state.withLock { $0 = State(value: value, digest: digest) }
            return .loaded(value)
        } catch {
            state.withLock {
                $0.digest = digest
                $0.failure = error.message
            }
            return .refused(error.message)
        }
    }

    /// SHA-256 over the files' bytes (an unreadable file counts as empty: the build says why).
    private static func digest(_ paths: [String?]) -> [UInt8] {
        var hasher = SHA256()
        for path in paths {
            let bytes = path.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
            hasher.update(data: Array(String(bytes.count).utf8) + [0])
            hasher.update(data: bytes)
        }
        return Array(hasher.finalize())
    }
}
