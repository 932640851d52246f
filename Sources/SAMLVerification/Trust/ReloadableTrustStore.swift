import NIOConcurrencyHelpers

/// Holds the current ``TrustStore`` snapshot and swaps it atomically on reload.
///
/// Readers take the snapshot once per request (``current``) and keep using it for the whole
/// verification, so a reload never mixes two configurations inside one request. A failed
/// reload keeps the previous snapshot.
public final class ReloadableTrustStore: Sendable {
    private let snapshot: NIOLockedValueBox<TrustStore>
    /// Held for a whole ``reload()``: SIGHUP, the poll and a metadata refresh can ask at the same
    /// moment, and without it an older load finishing last would replace a newer one.
    private let reloading = NIOLock()
    /// The directory ``reload()`` reads, if any.
    public let directory: String?
    /// Where fetched metadata's last good copies are (see ``MetadataSource``).
    public let metadataCache: String?

    public init(_ initial: TrustStore, directory: String? = nil, metadataCache: String? = nil) {
        self.snapshot = NIOLockedValueBox(initial)
        self.directory = directory
        self.metadataCache = metadataCache
    }

    /// Loads `directory` now and remembers it for ``reload()``.
    public convenience init(directory: String, metadataCache: String? = nil) throws(TrustStoreError) {
        self.init(try TrustStore.load(directory: directory, metadataCache: metadataCache), directory: directory, metadataCache: metadataCache)
    }

    public var current: TrustStore {
        snapshot.withLockedValue { $0 }
    }

    public func replace(with store: TrustStore) {
        snapshot.withLockedValue { $0 = store }
    }

    /// Re-reads ``directory``; on error the current snapshot stays in place and the error is thrown.
    @discardableResult
    public func reload() throws(TrustStoreError) -> TrustStore {
        guard let directory else { throw TrustStoreError("this trust store was not loaded from a directory") }
        let metadataCache = self.metadataCache
        let result = reloading.withLock { () -> Result<TrustStore, TrustStoreError> in
            do throws(TrustStoreError) {
                let fresh = try TrustStore.load(directory: directory, metadataCache: metadataCache)
                replace(with: fresh)
                return .success(fresh)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
