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
