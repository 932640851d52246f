import ServiceLifecycle

/// Reloads the served certificate when its files change (`tls-poll`), as SIGHUP does: cert-manager,
/// certbot and Kubernetes publish a renewal by rewriting the files (or swapping a symlink) and send
/// no signal. Each check reads the certificate, key and client CA files and compares their digest
/// with the loaded one (``ServerTLS/reload(trigger:)``): kilobytes once a minute.
struct TLSPollService: Service {
    let tls: ServerTLS
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                tls.reload(trigger: "poll")
            }
        }
    }
}
