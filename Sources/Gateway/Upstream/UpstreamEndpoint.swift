import Dispatch
import Foundation
import Synchronization

/// One backend base URL and its health. Passive: after a failure that says "cannot reach", it is
/// skipped for the cool-down, then tried again by live traffic. Active, with
/// `upstream-health-path`: ``UpstreamHealthChecker`` marks it down after failed probes and up
/// after passed ones. It is in rotation (and counted by `/readyz`) only while both say healthy,
/// so a cool-down that ends with no traffic cannot put a backend the probes find dead back.
package final class UpstreamEndpoint: Sendable {
    /// `http://host:port`, no trailing slash.
    package let baseURL: String
    /// Where to connect, parsed once from `baseURL`.
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The `Host` header the backend gets: the base URL's authority.
    let authority: String
    /// The TLS server name (SNI): the host, unless it is an IP address (SNI carries names only).
    var serverName: String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }
    /// A path the base URL carries (`http://h/prefix`), put before every forwarded path; or "".
    let pathPrefix: String
    private let unhealthyUntil = Atomic<UInt64>(0)
    /// Set and cleared by the health checks only; always false without them.
    private let probedDown = Atomic<Bool>(false)

    /// - Parameter baseURL: validated by the configuration (`http` or `https`, a host, no query).
    package init(baseURL: String) {
        self.baseURL = baseURL
        let url = URL(string: baseURL)
        usesTLS = url?.scheme == "https"
        host = url?.host ?? "127.0.0.1"
        let explicitPort = url?.port
        port = explicitPort ?? (usesTLS ? 443 : 80)
        let bracketed = host.contains(":") ? "[\(host)]" : host
        authority = explicitPort.map { "\(bracketed):\($0)" } ?? bracketed
        let path = url?.path ?? ""
        pathPrefix = path == "/" ? "" : path
    }

    /// In rotation: not cooling down, and not down by the health checks.
    package func isHealthy(at now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        !probedDown.load(ordering: .relaxed) && unhealthyUntil.load(ordering: .relaxed) <= now
    }

    /// The health checks' verdict (``UpstreamHealthChecker``), apart from the passive cool-down.
    func setProbedDown(_ down: Bool) {
        probedDown.store(down, ordering: .relaxed)
    }

    package func markFailed(coolDownNanos: UInt64) {
        unhealthyUntil.store(DispatchTime.now().uptimeNanoseconds + coolDownNanos, ordering: .relaxed)
    }

    package func markHealthy() {
        if unhealthyUntil.load(ordering: .relaxed) != 0 { unhealthyUntil.store(0, ordering: .relaxed) }
    }
}
