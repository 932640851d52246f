import Dispatch
import Foundation
import Synchronization

/// One backend base URL and its passive health: after a failure that says "cannot reach", it is
/// skipped for the cool-down, then tried again by live traffic (no active probing).
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

    package func isHealthy(at now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        unhealthyUntil.load(ordering: .relaxed) <= now
    }

    package func markFailed(coolDownNanos: UInt64) {
        unhealthyUntil.store(DispatchTime.now().uptimeNanoseconds + coolDownNanos, ordering: .relaxed)
    }

    package func markHealthy() {
        if unhealthyUntil.load(ordering: .relaxed) != 0 { unhealthyUntil.store(0, ordering: .relaxed) }
    }
}
