import ServiceLifecycle

/// Reloads the TLS files when they change (`tls-poll`), as SIGHUP does: the served certificate,
/// key and client CA, and the upstreams' CA and client certificate. cert-manager, certbot and
/// Kubernetes publish a renewal by rewriting the files (or swapping a symlink) and send no
/// signal. Each check reads the files and compares their digest with the loaded one
/// (``TLSFiles``): kilobytes once a minute.
struct TLSPollService: Service {
    let tls: ServerTLS?
    let upstreamTLS: UpstreamTLS?
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                tls?.reload(trigger: "poll")
                upstreamTLS?.reload(trigger: "poll")
            }
        }
    }
}
