import Foundation
import Logging
import NIOSSL
import ServerSupport

/// The TLS of the `https://` upstreams: the system's trust roots or `upstream-ca`'s, and the
/// client certificate of `upstream-tls-certificate` and `upstream-tls-key` for a backend that
/// requires one (TLS 1.2 at least).
///
/// Read again when those files change (SIGHUP, and every `tls-poll` seconds): a client
/// certificate renewed by cert-manager or certbot, or a new CA bundle, is used from the next
/// upstream connection on; the pooled connections keep theirs until they close. Files that do
/// not load keep the previous context, logged (`upstream_tls_reload_failed`), counted
/// (`samlgate_upstream_tls_reloads_total{result="failed"}`) and reported on `/readyz` until good
/// ones are published. A client certificate expired or not yet valid is refused as the
/// listener's is (at start-up too).
package final class UpstreamTLS: Sendable {
    private let files: TLSFiles<NIOSSLContext>
    /// Whether any file is read (with the system's roots alone there is nothing to reload).
    let readsFiles: Bool
    private let metrics: ConnectionMetrics
    private let logger: Logger

    /// Made when an upstream is an `https://` URL (``UpstreamClient``).
    init(configuration: GatewayConfiguration, metrics: ConnectionMetrics, logger: Logger) throws(ConfigurationError) {
        let (ca, certificate, key) = (configuration.upstreamCA, configuration.upstreamTLSCertificate, configuration.upstreamTLSKey)
        do throws(TLSLoadError) {
            files = try TLSFiles(paths: [ca, certificate, key]) { () throws(TLSLoadError) in
                try Self.load(ca: ca, certificate: certificate, key: key)
            }
        } catch {
            throw ConfigurationError("tls: \(error.message)")
        }
        readsFiles = ca != nil || certificate != nil
        self.metrics = metrics
        self.logger = logger
        if readsFiles { metrics.prepareUpstreamTLS() }
    }

    /// The context for a new upstream connection.
    var context: NIOSSLContext {
        files.value
    }

    /// Why the last reload was refused, until one succeeds (`/readyz` reports it).
    var reloadFailure: String? {
        files.failure
    }

    /// Reads the files again and, when their bytes changed, uses them for new connections (see
    /// ``ServerTLS/reload(trigger:retryingRefused:)`` for `retryingRefused`).
    /// - Returns: whether the files were loaded (and so whether anything was logged or counted).
    @discardableResult
    func reload(trigger: String, retryingRefused: Bool = false) -> Bool {
        guard readsFiles else { return false }
        switch files.reload(retryingRefused: retryingRefused) {
        case .unchanged:
            return false
        case .loaded:
            metrics.upstreamTLSReloaded(succeeded: true)
            logger.notice("upstream TLS files reloaded", metadata: ["trigger": .string(trigger)])
        case .refused(let why):
            metrics.upstreamTLSReloaded(succeeded: false)
            logger.error(
                "upstream TLS reload failed; keeping the previous files",
                metadata: ["code": "upstream_tls_reload_failed", "trigger": .string(trigger), "error": .string(why)])
        }
        return true
    }

    /// The context of these files; a client certificate must be valid now (as the listener's):
    /// an expired one published would fail every new upstream connection.
    static func load(ca: String?, certificate: String?, key: String?, now: Date = Date()) throws(TLSLoadError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let ca {
            tls.trustRoots = .certificates(try ServerTLS.certificates(in: ca, setting: "upstream-ca"))
        }
        if let certificate, let key {
            let chain = try ServerTLS.certificates(in: certificate, setting: "upstream-tls-certificate")
            _ = try ServerTLS.validUntil(chain[0], in: certificate, setting: "upstream-tls-certificate", now: now)
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(try ServerTLS.privateKey(in: key, setting: "upstream-tls-key"))
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw TLSLoadError(
                message: "upstream-tls-key \(key ?? "") does not match upstream-tls-certificate \(certificate ?? ""), or cannot be used: \(error)")
        }
    }
}
