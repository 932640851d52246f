// Remote metadata kept current: the scheduled refresh, the cached copies it writes, and the
// out-of-turn fetch a key not trusted asks for.

import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SAMLVerification
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fetches the trust store's remote metadata (`metadata.url` files) and keeps its last good
/// copies in `metadata-cache`; a new copy reloads the trust store as SIGHUP does.
///
/// Runs in the gateway's service group, never on a request's path. Each source is fetched at
/// start-up and then every refresh interval, conditionally (`If-None-Match`,
/// `If-Modified-Since`). A fetched document replaces the copy only when it passes every check a
/// load applies (``MetadataSource/check(_:now:)``) and is not older than the copy in use
/// (``MetadataPublication``); any failure — network, timeout, HTTP status, a refused redirect,
/// size, signature, expiry, a rollback, a full disk — keeps the last good copy, is counted
/// (`samlgate_metadata_refresh_failures_total{source,reason}`) and logged, and is retried after
/// ``retryCeiling`` at the latest. The sources are re-read from the current store on every
/// round, so a `metadata.url` added by a reload is fetched without a restart.
struct MetadataRefreshService: Service {
    let core: GatewayCore
    let eventLoopGroup: any EventLoopGroup

    /// A failed source is tried again after its interval or this, whichever is sooner.
    static let retryCeiling: TimeInterval = 60
    /// The longest sleep between rounds: how soon a source added by a reload is first fetched.
    static let idleWake: TimeInterval = 2
    /// Held while a fetched copy is compared with the cached one and replaces it: the scheduled
    /// refresh and an out-of-turn fetch (``MetadataRefetch``) of the same source may both bring
    /// the new copy, and only the first of them is the update (counted and reloaded once).
    private let cacheUpdate = CacheUpdate()

    func run() async throws {
        let timeout = Int64(core.configuration.metadataTimeout * 1000)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        // The client retries a refused connection until its connect timeout: at most half the
        // fetch's, so that a source that is down is reported as `network`, not `timeout`.
        configuration.timeout = .init(connect: .milliseconds(min(5000, timeout / 2)), read: .milliseconds(timeout))
        let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        let fetcher = MetadataFetcher(client: client, eventLoopGroup: eventLoopGroup, configuration: configuration, timeout: .milliseconds(timeout))
        // Out-of-turn fetches (a key not trusted: ``MetadataRefetch``) go through the same client and checks.
        core.metadataRefetch?.attach { source in await refresh(source, with: fetcher) }
        defer { core.metadataRefetch?.attach(nil) }
        await cancelWhenGracefulShutdown {
            // When each source (by MVPD and URL, so a changed URL is fetched at once) is due.
            var due: [String: Date] = [:]
            while !Task.isCancelled {
                let now = Date()
                var next = now.addingTimeInterval(Self.idleWake)
                for source in core.trustStore.current.metadataSources {
                    let key = source.name + " " + source.url.absoluteString
                    if let when = due[key], when > now {
                        next = min(next, when)
                        continue
                    }
                    let interval = source.refresh ?? core.configuration.metadataRefresh
                    let succeeded = await refresh(source, with: fetcher).succeeded
                    let when = Date().addingTimeInterval(succeeded ? interval : min(interval, Self.retryCeiling))
                    due[key] = when
                    next = min(next, when)
                }
                try? await Task.sleep(for: .milliseconds(Int64(max(0.01, next.timeIntervalSinceNow) * 1000)))
            }
        }
        try? await client.shutdown()
    }

    /// Writes a checked copy (and its validators) to the cache unless it is the cached one;
    /// whether it was. Under ``cacheUpdate``.
    private func replaceCachedCopy(
        of source: MetadataSource, with bytes: [UInt8], publication: MetadataPublication, validators fresh: MetadataValidators
    ) throws(MetadataFetchFailure) -> Bool {
        try cacheUpdate.lock.withLock { _ throws(MetadataFetchFailure) in
            try replaceCachedCopyAlone(of: source, with: bytes, publication: publication, validators: fresh)
        }
    }

    private func replaceCachedCopyAlone(
        of source: MetadataSource, with bytes: [UInt8], publication: MetadataPublication, validators fresh: MetadataValidators
    ) throws(MetadataFetchFailure) -> Bool {
        let unchanged = FileManager.default.contents(atPath: source.cachePath).map { Array($0) == bytes } ?? false
        // The cached copy is the one in use, also after a restart: a replayed older copy
        // must not bring back the keys a rotation retired.
        if !unchanged, let current = source.cachedPublication(), let why = publication.rollback(from: current) {
            throw MetadataFetchFailure(.rollback, "older than the copy in use: \(why)")
        }
        if !unchanged { try MetadataCacheFile.write(bytes, to: source.cachePath) }
        try? MetadataCacheFile.write(Array(fresh.text.utf8), to: MetadataValidators.path(for: source.cachePath))
        return unchanged
    }

    /// One fetch of `source`: a new copy (the trust store reloaded with it), none, or a failure.
    func refresh(_ source: MetadataSource, with fetcher: MetadataFetcher) async -> MetadataRefreshResult {
        let validators = MetadataValidators.read(for: source.cachePath)
        do throws(MetadataFetchFailure) {
            switch try await fetcher.fetch(source, validators: validators) {
            case .notModified:
                core.metrics.metadataRefresh(source: source.name, result: "not_modified", at: Date().timeIntervalSince1970)
                core.logger.debug("metadata not modified", metadata: ["source": .string(source.name)])
                return .unchanged
            case .fetched(let bytes, let fresh):
                let publication: MetadataPublication
                do throws(TrustStoreError) {
                    publication = try source.check(bytes)
                } catch {
                    throw MetadataFetchFailure(.invalid, error.message, code: error.code)
                }
                let unchanged = try replaceCachedCopy(of: source, with: bytes, publication: publication, validators: fresh)
                core.metrics.metadataRefresh(source: source.name, result: unchanged ? "not_modified" : "updated", at: Date().timeIntervalSince1970)
                guard !unchanged else { return .unchanged }
                core.logger.notice("metadata fetched; reloading the trust store", metadata: ["source": .string(source.name)])
                return core.reloadTrustStore() ? .updated : .failed
            }
        } catch {
            core.metrics.metadataRefresh(source: source.name, result: "failed", reason: error.reason.rawValue, at: 0)
            core.logger.warning(
                "metadata refresh failed; keeping the last good copy",
                metadata: [
                    "code": .string(error.code.rawValue), "source": .string(source.name), "reason": .string(error.reason.rawValue),
                    "error": .string(error.message), "cached": .stringConvertible(source.hasCachedCopy),
                ])
            return .failed
        }
    }
}

// MARK: - What a fetch came to

/// What one fetch of a metadata source came to.
enum MetadataRefreshResult: String, Sendable, CaseIterable {
    /// A new copy, checked, cached, and the trust store reloaded with it.
    case updated
    /// The copy in use is still current (`304`, or the same bytes).
    case unchanged
    /// Any failure: the last good copy stays.
    case failed

    var succeeded: Bool { self != .failed }
}

// MARK: - Writing the cached copy

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

// MARK: - Out-of-turn fetches

/// The lock a ``MetadataRefreshService`` holds while it replaces a cached copy, shared by its
/// copies (the service is a value; a lock is not copyable).
private final class CacheUpdate: Sendable {
    let lock = Mutex<Void>(())
}

/// Metadata fetched out of turn, so that an IdP's unannounced key rotation costs no outage:
/// when a response from an MVPD whose metadata is fetched is refused only because its signing
/// key is not trusted, its source is fetched at once instead of at the next scheduled refresh,
/// and the response verified once more if the copy changed (``ExchangeFlow``).
///
/// Bounded, because a forged response asks for it too: one fetch in flight per source (later
/// askers wait for it), and none started within `metadata-min-refetch` seconds of the last one
/// (askers then get "unchanged" at once). Counted in
/// `samlgate_metadata_refetch_total{source,result}`: `updated`, `unchanged`, `failed`, and
/// `suppressed` (within the interval).
package final class MetadataRefetch: Sendable {
    /// Fetches one source as the scheduled refresh does: set by ``MetadataRefreshService`` while
    /// it runs (it owns the HTTP client).
    typealias Runner = @Sendable (MetadataSource) async -> MetadataRefreshResult
    typealias Completion = @Sendable (MetadataRefreshResult) -> Void

    private let minimumInterval: TimeInterval
    private let metrics: GatewayMetrics
    private let state = Mutex(State())

    struct State {
        var runner: Runner?
        /// By source key: the askers waiting for the fetch in flight.
        var inFlight: [String: [Completion]] = [:]
        /// By source key: when its last out-of-turn fetch started.
        var started: [String: Date] = [:]
    }

    init(minimumInterval: TimeInterval, metrics: GatewayMetrics) {
        self.minimumInterval = minimumInterval
        self.metrics = metrics
    }

    /// Installs (or with `nil` removes) what fetches a source.
    func attach(_ runner: Runner?) {
        state.withLock { $0.runner = runner }
    }

    /// Asks for `source` to be fetched now; `completion` gets the result, on any thread:
    /// `unchanged` at once when a fetch of it started less than `metadata-min-refetch` ago or
    /// no refresher runs.
    func request(_ source: MetadataSource, now: Date = Date(), completion: @escaping Completion) {
        let key = source.name + " " + source.url.absoluteString
        enum Decision {
            case joined, suppressed
            case start(Runner)
        }
        let decision = state.withLock { state -> Decision in
            if state.inFlight[key] != nil {
                state.inFlight[key]?.append(completion)
                return .joined
            }
            guard let runner = state.runner else { return .suppressed }
            if let last = state.started[key], now.timeIntervalSince(last) < minimumInterval { return .suppressed }
            state.started[key] = now
            state.inFlight[key] = [completion]
            return .start(runner)
        }
        switch decision {
        case .joined:
            return
        case .suppressed:
            metrics.metadataRefetch(source: source.name, result: "suppressed")
            completion(.unchanged)
        case .start(let runner):
            Task {
                let result = await runner(source)
                metrics.metadataRefetch(source: source.name, result: result.rawValue)
                let waiting = state.withLock { $0.inFlight.removeValue(forKey: key) } ?? []
                for waiter in waiting { waiter(result) }
            }
        }
    }
}
