import Foundation
import Logging
import NIOSSL
import ServerSupport
import X509

/// `tls-client-auth`: whether the TLS listener asks clients for a certificate.
package enum ClientCertificatePolicy: String, Sendable, CaseIterable {
    /// Not asked for.
    case none
    /// Asked for; a client without one is served, one with a certificate that does not chain
    /// to `tls-client-ca` is refused at the handshake.
    case optional
    /// Required: a client without a certificate chaining to `tls-client-ca` is refused at the handshake.
    case require
}

/// `tls-min-version`.
package enum TLSMinimumVersion: String, Sendable, CaseIterable {
    case v1_2 = "1.2"
    case v1_3 = "1.3"
}

/// The TLS the client listener serves: the context every new connection's handshake uses,
/// built from `tls-certificate`, `tls-key` and `tls-client-ca`, and rebuilt when those files
/// change (SIGHUP, ``TLSPollService``; ``TLSFiles``) without touching the connections already open.
///
/// A pair that does not load (unreadable, not PEM, the key not the certificate's, expired)
/// stops start-up; on a reload it leaves the previous context serving, is logged and counted
/// (`samlgate_tls_reloads_total{result="failed"}`), and `/readyz` reports it until a good pair
/// is published (``reloadFailure``).
///
/// The profile is Mozilla's "intermediate": TLS 1.2 and 1.3, ECDHE key exchange with AES-GCM or
/// ChaCha20-Poly1305 only (BoringSSL has no DHE), curves X25519, P-256, P-384. TLS 1.3's suites
/// are BoringSSL's fixed set (the same three). OCSP stapling is not offered: swift-nio-ssl has no
/// API for it.
package final class ServerTLS: Sendable {
    /// One loaded pair: the context and what is reported of it.
    struct Loaded: Sendable {
        let context: NIOSSLContext
        /// The leaf's notAfter.
        let notAfter: Date
        /// The leaf's subject (RFC 4514), for the log.
        let subject: String
    }

    private let metrics: ConnectionMetrics
    private let logger: Logger
    private let files: TLSFiles<Loaded>

    /// The TLS 1.2 suites: ECDHE, AEAD, forward secrecy (TLS 1.3's are not configurable).
    static let cipherSuites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// `nil` when `tls-certificate` is not set (a plain listener).
    package init?(configuration: GatewayConfiguration, metrics: ConnectionMetrics, logger: Logger) throws(ConfigurationError) {
        guard let certificate = configuration.tlsCertificate, let key = configuration.tlsKey else { return nil }
        self.metrics = metrics
        self.logger = logger
        let (clientCA, clientAuth, minimumVersion) = (configuration.tlsClientCA, configuration.tlsClientAuth, configuration.tlsMinVersion)
        // ALPN, in the server's order of preference.
        let applicationProtocols = configuration.http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        do throws(TLSLoadError) {
            files = try TLSFiles(paths: [certificate, key, clientCA]) { () throws(TLSLoadError) in
                try Self.load(
                    certificate: certificate, key: key, clientCA: clientCA, clientAuth: clientAuth, minimumVersion: minimumVersion,
                    applicationProtocols: applicationProtocols)
            }
        } catch {
            throw ConfigurationError("tls: \(error.message)")
        }
        let loaded = files.value
        metrics.prepareTLS()
        metrics.servedCertificate(notAfter: loaded.notAfter.timeIntervalSince1970)
        logger.info(
            "serving TLS", metadata: ["subject": .string(loaded.subject), "not_after": .string(loaded.notAfter.ISO8601Format())])
    }

    /// The context for a new connection's handshake.
    var context: NIOSSLContext {
        files.value.context
    }

    /// The served certificate's notAfter.
    var notAfter: Date {
        files.value.notAfter
    }

    /// Why the last reload was refused, until one succeeds (`/readyz` reports it).
    var reloadFailure: String? {
        files.failure
    }

    /// Reads the files again and, when their bytes changed, serves the new pair to new
    /// connections; a pair that does not load keeps the previous one. A poll does not try the
    /// same refused bytes again; SIGHUP does (`retryingRefused`): a certificate refused as not
    /// yet valid becomes loadable with time alone.
    /// - Returns: whether the files were loaded (and so whether anything was logged or counted).
    @discardableResult
    func reload(trigger: String, retryingRefused: Bool = false) -> Bool {
        switch files.reload(retryingRefused: retryingRefused) {
        case .unchanged:
            return false
        case .loaded(let loaded):
            metrics.tlsReloaded(succeeded: true)
            metrics.servedCertificate(notAfter: loaded.notAfter.timeIntervalSince1970)
            logger.notice(
                "TLS certificate reloaded",
                metadata: [
                    "trigger": .string(trigger), "subject": .string(loaded.subject), "not_after": .string(loaded.notAfter.ISO8601Format()),
                ])
        case .refused(let why):
            metrics.tlsReloaded(succeeded: false)
            logger.error(
                "TLS certificate reload failed; keeping the previous one",
                metadata: ["code": "tls_reload_failed", "trigger": .string(trigger), "error": .string(why)])
        }
        return true
    }

    // MARK: - Loading

    static func load(
        certificate: String, key: String, clientCA: String?, clientAuth: ClientCertificatePolicy, minimumVersion: TLSMinimumVersion,
        applicationProtocols: [String], now: Date = Date()
    ) throws(TLSLoadError) -> Loaded {
        let chain = try certificates(in: certificate, setting: "tls-certificate")
        let privateKey = try privateKey(in: key, setting: "tls-key")
        let leaf = chain[0]
        let notAfter = try validUntil(leaf, in: certificate, setting: "tls-certificate", now: now)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = minimumVersion == .v1_3 ? .tlsv13 : .tlsv12
        configuration.cipherSuiteValues = cipherSuites
        configuration.curves = [.x25519, .secp256r1, .secp384r1]
        configuration.applicationProtocols = applicationProtocols
        if let clientCA {
            configuration.trustRoots = .certificates(try certificates(in: clientCA, setting: "tls-client-ca"))
            configuration.certificateVerification = clientAuth == .require ? .noHostnameVerification : .optionalVerification
            configuration.sendCANameList = true
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSLoadError(message: "tls-key \(key) does not match tls-certificate \(certificate), or cannot be used: \(error)")
        }
        return Loaded(context: context, notAfter: notAfter, subject: names(of: leaf)?.subject ?? "unreadable")
    }

    /// The leaf's notAfter, once it is valid now: not expired, and not valid only from more than 5
    /// minutes ahead (a clock a little behind the issuer's).
    static func validUntil(_ leaf: NIOSSLCertificate, in path: String, setting: String, now: Date) throws(TLSLoadError) -> Date {
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        guard notAfter > now else { throw TLSLoadError(message: "\(setting) \(path): expired on \(notAfter.ISO8601Format())") }
        guard notBefore <= now.addingTimeInterval(300) else {
            throw TLSLoadError(message: "\(setting) \(path): not valid before \(notBefore.ISO8601Format())")
        }
        return notAfter
    }

    /// Every certificate of a PEM file, at least one.
    static func certificates(in path: String, setting: String) throws(TLSLoadError) -> [NIOSSLCertificate] {
        guard let bytes = FileManager.default.contents(atPath: path) else { throw TLSLoadError(message: "\(setting) \(path): cannot be read") }
        guard let chain = try? NIOSSLCertificate.fromPEMBytes(Array(bytes)), !chain.isEmpty else {
            throw TLSLoadError(message: "\(setting) \(path): no PEM certificate in it")
        }
        return chain
    }

    static func privateKey(in path: String, setting: String) throws(TLSLoadError) -> NIOSSLPrivateKey {
        guard let bytes = FileManager.default.contents(atPath: path) else { throw TLSLoadError(message: "\(setting) \(path): cannot be read") }
        guard let key = try? NIOSSLPrivateKey(bytes: Array(bytes), format: .pem) else {
            throw TLSLoadError(message: "\(setting) \(path): not a PEM private key (or one with a passphrase)")
        }
        return key
    }

    /// A certificate's subject and issuer as RFC 4514 writes them (`CN=app,O=Example`).
    static func names(of certificate: NIOSSLCertificate) -> (subject: String, issuer: String)? {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else { return nil }
        return (parsed.subject.description, parsed.issuer.description)
    }
}
