import ArgumentParser
import Foundation
import Gateway
import GatewayTracing
import Logging
import NIOCore
import SAMLEncoding
import ServerSupport

/// `samlgate serve`: the gateway. Settings: defaults < `--config` file < `SAMLGATE_*`
/// environment < flags (every setting is documented in docs/configuration.md and deploy/samlgate.example.yaml).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the token-exchange gateway in front of one or more backends.",
        discussion: "Each setting can also come from the YAML file (same name) or SAMLGATE_<NAME> (upper case, _ for -).")

    @Option(help: "YAML configuration file (also SAMLGATE_CONFIG).") var config: String?
    @Option(help: "Listen address (default 127.0.0.1).") var host: String?
    @Option(help: "Listen port; 0 picks a free one (default 8080).") var port: String?
    @Option(help: "Backend base URL, e.g. http://127.0.0.1:9090 (repeatable).") var upstream: [String] = []
    @Option(
        name: .customLong("trust-store"),
        help: "Directory of <mvpd>/*.pem or <mvpd>/metadata.xml [+ issuer, platform-mapping-id], or metadata.xml + metadata.map.") var trustStore:
        String?
    @Option(help: "Required audience (default https://saml.sp.auth.adobe.com).") var audience: String?
    @Option(help: "Clock skew in seconds (default 120).") var skew: String?
    @Flag(name: .customLong("allow-sha1"), help: "Accept SHA-1 signatures and digests.") var allowSHA1 = false
    @Option(help: "Verification worker threads; 0 = one per CPU the process may use (default 0).") var workers: String?
    @Option(name: .customLong("event-loops"), help: "Event loops serving connections; 0 = one per CPU the process may use (default 0).")
    var eventLoops: String?
    @Option(help: "Requests that may wait for a worker before 503 overloaded (default 256).") var queue: String?
    @Option(name: .customLong("body-limit"), help: "Largest request body in bytes (default 1048576).") var bodyLimit: String?
    @Option(name: .customLong("connect-timeout"), help: "Upstream connect timeout, seconds (default 2).") var connectTimeout: String?
    @Option(name: .customLong("read-timeout"), help: "Upstream read timeout, seconds (default 10).") var readTimeout: String?
    @Option(name: .customLong("total-timeout"), help: "Upstream deadline per request, seconds (default 15).") var totalTimeout: String?
    @Option(name: .customLong("idle-timeout"), help: "Close a client connection silent this long, seconds (default 60).") var idleTimeout: String?
    @Option(name: .customLong("header-timeout"), help: "Time for a request head to arrive whole once begun, seconds (default 10).")
    var headerTimeout: String?
    @Option(name: .customLong("pool-size"), help: "Idle keep-alive connections per upstream and event loop (default 256).") var poolSize: String?
    @Option(name: .customLong("upstream-cooldown"), help: "Seconds a failing upstream is skipped (default 5).") var upstreamCooldown: String?
    @Option(
        name: .customLong("upstream-health-path"),
        help: "Probe every upstream with GET of this path, e.g. /healthz (default none: passive health only).")
    var upstreamHealthPath: String?
    @Option(name: .customLong("upstream-health-interval"), help: "Seconds between two probes of an upstream (default 5).")
    var upstreamHealthInterval: String?
    @Option(name: .customLong("upstream-health-timeout"), help: "Deadline of one probe, seconds (default 2).") var upstreamHealthTimeout: String?
    @Option(name: .customLong("upstream-health-rise"), help: "Probes passed in a row that put a down upstream back (default 2).")
    var upstreamHealthRise: String?
    @Option(name: .customLong("upstream-health-fall"), help: "Probes failed in a row that take an upstream out of rotation (default 3).")
    var upstreamHealthFall: String?
    @Option(name: .customLong("replay-capacity"), help: "Assertion ids remembered against replay (default 200000).") var replayCapacity: String?
    @Option(
        name: .customLong("replay-store"),
        help: "memory, or redis://[user:password@]host:port[/db] / rediss://… shared by every replica (default memory).")
    var replayStore: String?
    @Option(
        name: .customLong("replay-store-failure"), help: "closed|open: refuse (503) or accept unrecorded when Redis cannot answer (default closed).")
    var replayStoreFailure: String?
    @Option(name: .customLong("replay-store-timeout"), help: "Redis connect and command timeout, seconds (default 0.5).") var replayStoreTimeout:
        String?
    @Option(name: .customLong("replay-store-connections"), help: "Redis connections per event loop (default 1).") var replayStoreConnections: String?
    @Option(name: .customLong("replay-store-ca"), help: "For rediss://: PEM file of the CAs to trust (default: the system's).") var replayStoreCA:
        String?
    @Option(name: .customLong("replay-store-password-file"), help: "File holding the Redis password (instead of one in the URL).")
    var replayStorePasswordFile: String?
    @Option(name: .customLong("trust-store-poll"), help: "Seconds between checks of the trust store for a change; 0 = SIGHUP only (default 0).")
    var trustStorePoll: String?
    @Option(name: .customLong("metadata-cache"), help: "Writable directory for the last good copy of fetched metadata (trust store metadata.url).")
    var metadataCache: String?
    @Option(name: .customLong("metadata-refresh"), help: "Seconds between fetches of a metadata.url without metadata.refresh (default 3600).")
    var metadataRefresh: String?
    @Option(name: .customLong("metadata-timeout"), help: "Deadline of one metadata fetch, seconds (default 30).") var metadataTimeout: String?
    @Option(
        name: .customLong("metadata-min-refetch"),
        help: "Shortest time between two fetches of a source out of turn (a key not trusted), seconds (default 60).")
    var metadataMinRefetch: String?
    @Option(name: .customLong("log-level"), help: "trace|debug|info|notice|warning|error|critical (default info).") var logLevel: String?
    @Option(name: .customLong("log-format"), help: "json|text (default json).") var logFormat: String?
    @Option(name: .customLong("forward-form"), help: "cookbook|signature-preserving (default cookbook).") var forwardForm: String?
    @Option(name: .customLong("help-url"), help: "helpUrl of error bodies: a URL, or none (default: the backend's error-code page).")
    var helpURL: String?
    @Option(name: .customLong("error-details"), help: "reason|none: samlgate's reason in the details of refusals (default reason).")
    var errorDetails: String?
    @Option(name: .customLong("trusted-proxies"), help: "CIDR blocks whose X-Forwarded-* are believed, comma-separated (default none).")
    var trustedProxies: String?
    @Flag(
        name: .customLong("allow-underscore-headers"),
        help: "Forward request headers with _ in the name (dropped by default: some backends read X_Forwarded_For as X-Forwarded-For).")
    var allowUnderscoreHeaders = false

    @Option(
        name: .customLong("mode"),
        help: "enforce (refuse what fails verification) or report-only (forward it and report it), for MVPDs without a mode file (default enforce).")
    var mode: String?
    @Option(
        name: .customLong("throttle-exchanges"),
        help: "Token bucket per client on the exchanges: RATE/BURST (requests a second / beyond it at once), or off (default 1/10).")
    var throttleExchanges: String?
    @Option(name: .customLong("throttle-pass-through"), help: "The same on every other request passed through (default off).")
    var throttlePassThrough: String?
    @Option(
        name: .customLong("throttle-store"),
        help: "memory (each replica throttles alone) or shared (the exchange buckets in the replay store's Redis) (default memory).")
    var throttleStore: String?
    @Option(name: .customLong("max-connections"), help: "Open client connections beyond which new ones are closed; 0 = no limit (default 16384).")
    var maxConnections: String?
    @Option(
        name: .customLong("max-connections-per-client"),
        help: "Open connections from one peer address beyond which its new ones are closed; 0 = no limit (default 0).")
    var maxConnectionsPerClient: String?
    @Option(
        name: .customLong("tracing-endpoint"),
        help: "Export spans over OTLP/HTTP to this traces URL, e.g. http://127.0.0.1:4318/v1/traces (default none: tracing off).")
    var tracingEndpoint: String?
    @Option(name: .customLong("tracing-sample-ratio"), help: "Share of new traces recorded, 0...1 (default 1).")
    var tracingSampleRatio: String?
    @Option(name: .customLong("tracing-service-name"), help: "service.name of the exported spans (default samlgate).")
    var tracingServiceName: String?
    @Option(
        name: .customLong("audit-log"),
        help: "Append one JSON line per token exchange decided to this file, or - for standard output (default none). Reopened on SIGHUP.")
    var auditLog: String?
    @Option(
        name: .customLong("audit-key-file"),
        help: "File holding the audit key (at least 32 bytes): lines then carry the NameID's HMAC as subject. Or SAMLGATE_AUDIT_KEY.")
    var auditKeyFile: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration: GatewayConfiguration
        do {
            configuration = try resolve(environment: environment)
        } catch {
            console(json: earlyLogFormat(environment: environment) == .json).fail(error.message)
            throw ExitCode(2)
        }
        let console = console(json: configuration.logFormat == .json)
        ServerLogging.bootstrap(level: configuration.logLevel, format: configuration.logFormat.rawValue)
        let logger = Logger(label: "samlgate.gateway")
        // Before anything uses NIO's shared event-loop group, which the server runs on: NIO sizes
        // it by the cgroup's quota and cpuset but not the affinity mask (see `UsableCPUs`).
        NIOSingletons.groupLoopCountSuggestion = configuration.eventLoopCount
        let server: GatewayServer
        do {
            let tracing = try OTLPTracing.backend(for: configuration, logger: Logger(label: "samlgate.tracing"))
            server = try GatewayServer(configuration: configuration, logger: logger, signals: true, tracing: tracing)
        } catch {
            console.fail(error.message)
            throw ExitCode(2)
        }
        // The shared replay store, asked once before listening: a Redis that rejects what the
        // gateway sends would refuse (or leave unrecorded) every exchange, so start-up stops;
        // one that is merely down or refusing for now is logged, and the gateway starts.
        if let shared = server.core.sharedReplayStore, case .unsupported(let why) = await shared.checkAtStartUp() {
            console.fail("replay-store: \(ErrorCode.replayStoreUnsupported): \(why)")
            await server.core.shutdown()
            throw ExitCode(2)
        }
        Task {
            let port = await server.port.value()
            let url = "http://\(configuration.host):\(port)"
            let upstreams = configuration.upstreams.joined(separator: ", ")
            let workers = configuration.workerCount, eventLoops = configuration.eventLoopCount
            let mvpds = server.core.trustStore.current.providers.count
            let allocator = MemoryAllocator.description
            // The replay store as configured, its password masked; named only when shared.
            let replayStore = configuration.replayStore.description
            let shared = configuration.replayStore == .memory ? "" : ", replay store \(replayStore)"
            let tracing = configuration.tracingEndpoint.map { ", tracing to \($0) at ratio \(configuration.tracingSampleRatio)" } ?? ""
            console.listening(
                "samlgate gateway listening on \(url) -> \(upstreams) (\(eventLoops) event loops, \(workers) workers, \(mvpds) MVPDs\(shared)\(tracing), "
                    + "allocator \(allocator))",
                fields: [
                    "url": .string(url), "upstreams": .string(upstreams), "workers": .stringConvertible(workers),
                    "eventLoops": .stringConvertible(eventLoops),
                    "mvpds": .stringConvertible(mvpds), "replayStore": .string(replayStore), "allocator": .string(allocator),
                    "tracing": .string(configuration.tracingEndpoint ?? "off"),
                ])
        }
        do {
            try await server.run()
        } catch {
            console.fail("\(error)")
            throw ExitCode.failure
        }
    }

    func console(json: Bool) -> ServerConsole {
        ServerConsole(json: json, label: "samlgate.gateway", command: "samlgate: serve")
    }

    /// The format to report a configuration error in when the configuration as a whole could not
    /// be resolved: the flag, else `SAMLGATE_LOG_FORMAT`, else the file's `log-format` (each when
    /// valid), else the default.
    func earlyLogFormat(environment: [String: String]) -> LogFormat {
        if let format = logFormat.flatMap({ LogFormat(rawValue: $0.lowercased()) }) { return format }
        if let format = environment[GatewaySetting.logFormat.environmentName].flatMap({ LogFormat(rawValue: $0.lowercased()) }) {
            return format
        }
        if let file = config ?? environment["SAMLGATE_CONFIG"], let format = GatewayConfiguration.logFormat(inFile: file) {
            return format
        }
        return GatewayConfiguration().logFormat
    }

    /// Layers the sources: defaults, file, environment, flags. (`GatewayCore` validates the result.)
    func resolve(environment: [String: String]) throws(ConfigurationError) -> GatewayConfiguration {
        var configuration = GatewayConfiguration()
        if let file = config ?? environment["SAMLGATE_CONFIG"] {
            try configuration.apply(file: file)
        }
        try configuration.apply(environment: environment)
        let flags: [(GatewaySetting, String?)] = [
            (.host, host), (.port, port), (.trustStore, trustStore), (.audience, audience), (.skew, skew),
            (.allowSHA1, allowSHA1 ? "true" : nil), (.workers, workers), (.eventLoops, eventLoops), (.queue, queue), (.bodyLimit, bodyLimit),
            (.connectTimeout, connectTimeout), (.readTimeout, readTimeout), (.totalTimeout, totalTimeout), (.idleTimeout, idleTimeout),
            (.headerTimeout, headerTimeout), (.poolSize, poolSize),
            (.upstreamCooldown, upstreamCooldown), (.upstreamHealthPath, upstreamHealthPath), (.upstreamHealthInterval, upstreamHealthInterval),
            (.upstreamHealthTimeout, upstreamHealthTimeout), (.upstreamHealthRise, upstreamHealthRise), (.upstreamHealthFall, upstreamHealthFall),
            (.replayCapacity, replayCapacity), (.replayStore, replayStore),
            (.replayStoreFailure, replayStoreFailure), (.replayStoreTimeout, replayStoreTimeout),
            (.replayStoreConnections, replayStoreConnections), (.replayStoreCA, replayStoreCA),
            (.replayStorePasswordFile, replayStorePasswordFile), (.trustStorePoll, trustStorePoll),
            (.metadataCache, metadataCache), (.metadataRefresh, metadataRefresh), (.metadataTimeout, metadataTimeout),
            (.metadataMinRefetch, metadataMinRefetch), (.logLevel, logLevel),
            (.logFormat, logFormat), (.forwardForm, forwardForm), (.helpURL, helpURL), (.errorDetails, errorDetails),
            (.trustedProxies, trustedProxies),
            (.allowUnderscoreHeaders, allowUnderscoreHeaders ? "true" : nil),
            (.mode, mode), (.throttleExchanges, throttleExchanges), (.throttlePassThrough, throttlePassThrough),
            (.throttleStore, throttleStore), (.maxConnections, maxConnections),
            (.maxConnectionsPerClient, maxConnectionsPerClient),
            (.tracingEndpoint, tracingEndpoint), (.tracingSampleRatio, tracingSampleRatio), (.tracingServiceName, tracingServiceName),
            (.auditLog, auditLog), (.auditKeyFile, auditKeyFile),
        ]
        for case let (setting, value?) in flags {
            try configuration.apply(setting, value: value, source: "--\(setting.rawValue)")
        }
        if !upstream.isEmpty {
            configuration.upstreams = []
            for url in upstream { try configuration.apply(.upstream, value: url, source: "--upstream") }
        }
        return configuration
    }
}
