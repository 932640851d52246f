import Foundation
import Logging
import NIOCore
import SAMLVerification
import ServerSupport
import Workers

/// Every setting of `samlgate serve`, with its default, and the types of their values.
///
/// Each setting has one name used everywhere: the YAML key (`trust-store:`), the flag
/// (`--trust-store`) and the environment variable (`SAMLGATE_TRUST_STORE`); the name, the help
/// and the reading of each are declared in ``GatewaySetting``, the typed value and its default
/// here. Sources are layered: defaults, then the `--config` file, then the environment, then
/// flags (see ``GatewayConfiguration/apply(_:value:source:)``).
package struct GatewayConfiguration: Sendable {
    /// Listen address.
    package var host: String = "127.0.0.1"
    /// Listen port; 0 picks a free one (printed at start-up).
    package var port: Int = 8080
    /// Base URLs of the backends (`http://host:port`), used round-robin.
    package var upstreams: [String] = []
    /// Directory of `<mvpd>/*.pem`, optional `<mvpd>/issuer` and `<mvpd>/platform-mapping-id`.
    package var trustStore: String?
    /// The audience every assertion must name.
    package var audience: String = "https://saml.sp.auth.adobe.com"
    /// Allowed clock difference with IdPs, seconds.
    package var skew: Double = 120
    /// Accept SHA-1 signatures and digests.
    package var allowSHA1: Bool = false
    /// Verification worker threads; 0 means one per CPU the process may use.
    package var workers: Int = 0
    /// Event loops (the threads that serve connections); 0 means one per CPU the process may use.
    package var eventLoops: Int = 0
    /// Requests that may wait for a worker before the gateway answers 503 `overloaded`.
    package var queue: Int = 256
    /// Largest accepted request body, bytes (413 `body_too_large` above).
    package var bodyLimit: Int = 1 << 20
    /// Upstream TCP connect timeout, seconds.
    package var connectTimeout: Double = 2
    /// Upstream read timeout (no byte received for this long), seconds.
    package var readTimeout: Double = 10
    /// Upstream deadline for the whole exchange, seconds.
    package var totalTimeout: Double = 15
    /// A client connection that sends nothing for this long is closed, seconds: between
    /// requests (idle keep-alive) and in the middle of a request body (a stalled upload), so
    /// idle or deliberately slow clients cannot hold connections and request tasks forever.
    package var idleTimeout: Double = 60
    /// A request head must be complete this long after its first bytes, seconds: a head that
    /// trickles in a byte at a time resets the idle clock forever, not this one.
    package var headerTimeout: Double = 10
    /// `SO_SNDBUF` of client connections, bytes; `nil` leaves the kernel's (autotuned) size. Not
    /// a setting: a test that needs an answer the kernel cannot take whole sets it small.
    package var clientSendBuffer: Int?
    /// Idle keep-alive connections kept per upstream on each event loop. Under load a pool must
    /// hold as many connections as that loop has requests in flight, or every answer beyond it
    /// closes a connection the next request opens again (measured: at 256 client connections a
    /// pool of 64 costs a pass-through 64 µs of CPU where 256 costs 44 µs).
    package var poolSize: Int = 256
    /// Seconds a failing upstream is skipped before it is tried again.
    package var upstreamCooldown: Double = 5
    /// The path (below each base URL, as a request's would be) of the active health checks:
    /// `GET` it on every upstream every ``upstreamHealthInterval``; `nil` (the default) is
    /// passive health only. Without it an upstream nobody sends traffic to looks healthy again
    /// once its cool-down ends, however long it has been down.
    package var upstreamHealthPath: String?
    /// Seconds from the end of one probe of an upstream to the start of the next.
    package var upstreamHealthInterval: Double = 5
    /// Deadline of one probe, connect to the answer's head, seconds.
    package var upstreamHealthTimeout: Double = 2
    /// Probes passed in a row that put an upstream down by the checks back in rotation.
    package var upstreamHealthRise: Int = 2
    /// Probes failed in a row that take an upstream out of rotation: one lost probe is not an outage.
    package var upstreamHealthFall: Int = 3
    /// Assertion ids remembered for replay protection (the `memory` store).
    package var replayCapacity: Int = 200_000
    /// Where accepted assertion ids are recorded: this process, or a Redis every replica shares.
    package var replayStore: ReplayStoreLocation = .memory
    /// What an exchange does when the shared store cannot answer.
    package var replayStoreFailure: ReplayStoreFailurePolicy = .closed
    /// Connect and command timeout of the shared replay store, seconds.
    package var replayStoreTimeout: Double = 0.5
    /// Redis connections per event loop (commands are pipelined on each).
    package var replayStoreConnections: Int = 1
    /// Replicas that must have each record (`WAIT` after the `SET`) before the exchange goes on;
    /// 0 does not wait. A record fewer replicas confirmed is the store not answering.
    package var replayStoreReplicas: Int = 0
    /// How long `WAIT` waits for ``replayStoreReplicas``, seconds (below ``replayStoreTimeout``).
    package var replayStoreReplicaWait: Double = 0.1
    /// For `rediss://`: a PEM file of the certificate authorities to trust (default: the system's).
    package var replayStoreCA: String?
    /// A file holding the Redis password (a mounted secret, a systemd credential), used instead
    /// of a password in the `replay-store` URL, so the password need be in neither the
    /// environment nor the configuration file. Read by ``validated()``.
    package var replayStorePasswordFile: String?
    /// With `redis-sentinel://`: a file holding the Sentinels' own password (`requirepass` in
    /// sentinel.conf), which the URL cannot carry (its password is the data nodes'). Read by
    /// ``validated()``.
    package var replayStoreSentinelPasswordFile: String?
    /// Seconds between checks of the trust store directory for a change, reloaded as on SIGHUP
    /// when one is seen (Kubernetes swaps a mounted volume's symlink and sends no signal); 0 off.
    package var trustStorePoll: Double = 0
    /// A writable directory for the last good copy of each fetched metadata source
    /// (`metadata.url` in the trust store), used at start-up when a source is down. The trust
    /// store itself may be read-only (a mounted ConfigMap).
    package var metadataCache: String?
    /// Seconds between fetches of a metadata source that has no `metadata.refresh` of its own.
    /// An hour: IdPs publish a rotation days ahead, and a conditional GET that finds nothing new
    /// costs the source one small answer.
    package var metadataRefresh: Double = 3600
    /// Deadline for one metadata fetch, connect to last byte, seconds.
    package var metadataTimeout: Double = 30
    /// The shortest time between two out-of-turn fetches of one metadata source, seconds: a
    /// response refused only for a key not trusted fetches its MVPD's metadata at once (an
    /// unannounced rotation), and forged responses must not turn that into a flood.
    package var metadataMinRefetch: Double = 60
    package var logLevel: Logger.Level = .info
    package var logFormat: LogFormat = .json
    package var forwardForm: ForwardForm = .cookbook
    /// `enforce` (refuse what fails verification) or `report-only` (forward it, and report
    /// it), for the MVPDs without a `mode` file of their own.
    package var mode: EnforcementMode = .enforce
    /// The token bucket per client on the exchanges (``ClientThrottle``); `nil` is off. The
    /// backend's own throttle by default: a client it lets through is never refused here.
    package var throttleExchanges: ThrottleRate? = .backend
    /// Where the exchange throttle's buckets live: this process (`memory`), or the shared replay
    /// store's Redis (`shared`), so that replicas count a client once (``SharedThrottle``).
    package var throttleShared: Bool = false
    /// The same on every other request passed through; off by default (cheap requests, and the
    /// backend throttles them itself).
    package var throttlePassThrough: ThrottleRate?
    /// Open client connections beyond which new ones are closed at accept; 0 is no limit.
    package var maxConnections: Int = 16_384
    /// Open connections from one peer address beyond which its new ones are closed at accept; 0
    /// is no limit, the default: behind a load balancer every connection has the balancer's address.
    package var maxConnectionsPerClient: Int = 0
    /// Open HTTP/2 streams from one peer address, over all its connections, beyond which new
    /// ones are refused with `REFUSED_STREAM`: each holds a backend connection, as an HTTP/1.1
    /// connection does. 0 takes ``maxConnectionsPerClient`` (itself 0 for no limit).
    package var maxStreamsPerClient: Int = 0
    /// Open connections to `plain-port`, counted apart from ``maxConnections``: probes and
    /// scrapes are answered when the client listener is full.
    package var maxProbeConnections: Int = 64
    /// Bytes of answers an HTTP/2 connection holds for its client, written and not yet sent
    /// (``HTTP2AnswerBudget``): beyond it the backend's answers are not read.
    package var http2AnswerBudget: Int = 1 << 20
    /// Where spans are exported, an OTLP/HTTP traces URL (`http://collector:4318/v1/traces`);
    /// `nil` is tracing off, the default: no span is made.
    package var tracingEndpoint: String?
    /// The share of requests whose spans are recorded (0…1), decided by trace id: a client's
    /// `traceparent` flags do not decide it (a client could otherwise have every one of its
    /// requests exported), and the trace id is continued either way.
    package var tracingSampleRatio: Double = 1
    /// The `service.name` of the exported spans.
    package var tracingServiceName: String = "samlgate"
    /// Where the audit trail is appended, one JSON line per exchange decided (``AuditLog``); `-`
    /// is standard output; `nil` (the default) is no audit trail.
    package var auditLog: String?
    /// A file holding the audit key (``AuditKey``): the `subject` of an audit line is the
    /// NameID's HMAC under it. Read by ``validated()``; wins over ``auditKeyFromEnvironment``.
    package var auditKeyFile: String?
    /// The key itself, from `SAMLGATE_AUDIT_KEY` (a key has no flag nor file entry: a command
    /// line or a configuration file is seen by too many). Cleared by ``validated()``.
    package var auditKeyFromEnvironment: String?
    /// The audit key, set by ``validated()`` from the file or the environment; `nil`: lines
    /// carry no `subject`.
    package var auditKey: AuditKey?
    /// Peers (CIDR blocks) whose `X-Forwarded-Host`/`-Proto` are kept and whose
    /// `X-Forwarded-For` is extended; from any other peer the gateway writes its own.
    package var trustedProxies = TrustedProxies()
    /// Forward request headers whose names hold `_` (dropped by default, as nginx does: Rack,
    /// WSGI, CGI and Symfony read `X_Forwarded_For` as `X-Forwarded-For`). Even then, one that
    /// reads as a header the gateway checks or sets is dropped.
    package var allowUnderscoreHeaders: Bool = false
    /// The `helpUrl` of error bodies, as given (the backend's own page of error codes unless the
    /// operator names another); `nil` (the setting `none`) leaves `helpUrl` out.
    package var helpURL: String? = EnhancedError.backendHelpURL
    /// Whether a refusal's `details` tells samlgate's reason (`signature_invalid`, `replayed` …).
    /// `none` keeps it to the log and the metrics: a gateway facing the internet need not tell an
    /// attacker which check failed.
    package var errorDetails: ErrorDetails = .reason

    /// The certificate chain (PEM, leaf first) and private key the client listener serves TLS
    /// with; `nil` (the default) is plain HTTP. Reloaded without a restart (``ServerTLS``).
    package var tlsCertificate: String?
    package var tlsKey: String?
    /// The certificate authorities (PEM) a client certificate must chain to.
    package var tlsClientCA: String?
    /// Whether a client certificate is asked for, and required.
    package var tlsClientAuth: ClientCertificatePolicy = .none
    /// The oldest TLS version accepted: 1.2, as Mozilla's "intermediate" profile.
    package var tlsMinVersion: TLSMinimumVersion = .v1_2
    /// Seconds between checks of the TLS files — the listener's certificate, key and client CA,
    /// the upstreams' CA and client certificate — for a change (reloaded as on SIGHUP); 0 is
    /// SIGHUP only. A minute: a renewal is published days before expiry.
    package var tlsPoll: Double = 60
    /// Offer HTTP/2 (ALPN `h2`) on the TLS listener.
    package var http2: Bool = true
    /// Accept HTTP/2 with prior knowledge (h2c) on a plain listener, beside HTTP/1.1.
    package var h2c: Bool = false
    /// With TLS on, a second, plain HTTP listener (same host) serving `/healthz`, `/readyz` and
    /// `/metrics` only, for probes and scrapes that do not speak TLS; `nil` is none, 0 a free port.
    package var plainPort: Int?
    /// A client certificate chain and key the gateway presents to `https://` upstreams that
    /// require one (mutual TLS).
    package var upstreamTLSCertificate: String?
    package var upstreamTLSKey: String?
    /// The certificate authorities (PEM) an `https://` upstream's certificate must chain to;
    /// `nil` is the system's.
    package var upstreamCA: String?

    package init() {}

    /// Resolved worker count: by default one per CPU the process may use (``UsableCPUs``: its
    /// affinity mask and its cgroup's CPU quota, not the machine's core count).
    package var workerCount: Int {
        workers > 0 ? workers : UsableCPUs.count
    }

    /// Resolved event-loop count, by default sized like ``workerCount``.
    package var eventLoopCount: Int {
        eventLoops > 0 ? eventLoops : UsableCPUs.count
    }

    /// `url` as a log line may show it: the user and password in it and its query masked (a
    /// collector's key travels in one or the other), its fragment left out.
    package static func maskedForLogs(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(not a URL)" }
        if components.user != nil || components.password != nil {
            components.user = "***"
            components.password = nil
        }
        if components.query != nil { components.query = "***" }
        components.fragment = nil
        return components.string ?? "(not a URL)"
    }
}

// MARK: - Values of settings

/// How log records are written to standard error.
package enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (for log shippers).
    case json
    /// `timestamp level message key=value …` (for people).
    case text
}

/// The `error-details` setting: what a refusal's `details` says.
package enum ErrorDetails: String, Sendable, CaseIterable {
    /// samlgate's reason and its context (`signature_invalid`, `body_too_large; limit=1048576`).
    case reason
    /// No `details`: the reason is only in the log line and the metrics.
    case none
}

/// What the gateway forwards upstream as `SAMLResponse`. In both forms the bytes forwarded
/// (after one percent- and base64-decoding) are a document the gateway verified itself.
@_spi(Benchmarks) public enum ForwardForm: String, Sendable, CaseIterable {
    /// Exactly what the cookbook produces: whitespace-normalized, base64, percent-encoded. The
    /// normalized document is what is verified. When normalization breaks the IdP's signature
    /// (typically a `SignedInfo` with line breaks), the original is verified instead and the
    /// normalized document is forwarded only if it parses to the same tree (whitespace in text
    /// aside), counted in `samlgate_equivalent_normalized_forwards_total`; otherwise
    /// `401 normalization_changes_document`.
    case cookbook
    /// Like `cookbook`, except when normalization breaks the IdP's signature: then the original
    /// response, verified as received, is base64- and percent-encoded *without* normalization,
    /// so whoever verifies after the gateway still can. Counted in
    /// `samlgate_signature_preserving_forwards_total`.
    case signaturePreserving = "signature-preserving"
}
