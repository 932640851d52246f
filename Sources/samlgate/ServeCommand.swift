import ArgumentParser
import Foundation
import Gateway
import Logging
import ServerSupport

/// `samlgate serve`: the gateway. Settings: defaults < `--config` file < `SAMLGATE_*`
/// environment < flags (every setting is documented in README and deploy/samlgate.example.yaml).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the token-exchange gateway in front of one or more backends.",
        discussion: "Each setting can also come from the YAML file (same name) or SAMLGATE_<NAME> (upper case, _ for -).")

    @Option(help: "YAML configuration file (also SAMLGATE_CONFIG).") var config: String?
    @Option(help: "Listen address (default 127.0.0.1).") var host: String?
    @Option(help: "Listen port; 0 picks a free one (default 8080).") var port: String?
    @Option(help: "Backend base URL, e.g. http://127.0.0.1:9090 (repeatable).") var upstream: [String] = []
    @Option(name: .customLong("trust-store"), help: "Directory of <mvpd>/*.pem [+ issuer, platform-mapping-id].") var trustStore: String?
    @Option(help: "Required audience (default https://saml.sp.auth.adobe.com).") var audience: String?
    @Option(help: "Clock skew in seconds (default 120).") var skew: String?
    @Flag(name: .customLong("allow-sha1"), help: "Accept SHA-1 signatures and digests.") var allowSHA1 = false
    @Option(help: "Verification worker threads; 0 = one per core (default 0).") var workers: String?
    @Option(help: "Requests that may wait for a worker before 503 overloaded (default 256).") var queue: String?
    @Option(name: .customLong("body-limit"), help: "Largest request body in bytes (default 1048576).") var bodyLimit: String?
    @Option(name: .customLong("connect-timeout"), help: "Upstream connect timeout, seconds (default 2).") var connectTimeout: String?
    @Option(name: .customLong("read-timeout"), help: "Upstream read timeout, seconds (default 10).") var readTimeout: String?
    @Option(name: .customLong("total-timeout"), help: "Upstream deadline per request, seconds (default 15).") var totalTimeout: String?
    @Option(name: .customLong("idle-timeout"), help: "Close a client connection silent this long, seconds (default 60).") var idleTimeout: String?
    @Option(name: .customLong("pool-size"), help: "Keep-alive connections per upstream (default 64).") var poolSize: String?
    @Option(name: .customLong("upstream-cooldown"), help: "Seconds a failing upstream is skipped (default 5).") var upstreamCooldown: String?
    @Option(name: .customLong("replay-capacity"), help: "Assertion ids remembered against replay (default 200000).") var replayCapacity: String?
    @Option(name: .customLong("log-level"), help: "trace|debug|info|notice|warning|error|critical (default info).") var logLevel: String?
    @Option(name: .customLong("log-format"), help: "json|text (default json).") var logFormat: String?
    @Option(name: .customLong("forward-form"), help: "cookbook|signature-preserving (default cookbook).") var forwardForm: String?
    @Option(name: .customLong("help-url"), help: "Base of helpUrl in error bodies.") var helpURL: String?
    @Option(name: .customLong("trusted-proxies"), help: "CIDR blocks whose X-Forwarded-* are believed, comma-separated (default none).")
    var trustedProxies: String?

    func run() async throws {
        let configuration: GatewayConfiguration
        do {
            configuration = try resolve(environment: ProcessInfo.processInfo.environment)
        } catch {
            StandardStreams.writeError("samlgate: serve: \(error.message)\n")
            throw ExitCode(2)
        }
        ServerLogging.bootstrap(level: configuration.logLevel, format: configuration.logFormat.rawValue)
        let logger = Logger(label: "samlgate.gateway")
        let server: GatewayServer
        do {
            server = try GatewayServer(configuration: configuration, logger: logger, signals: true)
        } catch {
            StandardStreams.writeError("samlgate: serve: \(error.message)\n")
            throw ExitCode(2)
        }
        Task {
            let port = await server.port.value()
            StandardStreams.write(
                "samlgate gateway listening on http://\(configuration.host):\(port) -> \(configuration.upstreams.joined(separator: ", "))"
                    + " (\(configuration.workerCount) workers, \(server.core.trustStore.current.providers.count) MVPDs, allocator \(MemoryAllocator.description))\n")
        }
        try await server.run()
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
            (.allowSHA1, allowSHA1 ? "true" : nil), (.workers, workers), (.queue, queue), (.bodyLimit, bodyLimit),
            (.connectTimeout, connectTimeout), (.readTimeout, readTimeout), (.totalTimeout, totalTimeout), (.idleTimeout, idleTimeout),
            (.poolSize, poolSize),
            (.upstreamCooldown, upstreamCooldown), (.replayCapacity, replayCapacity), (.logLevel, logLevel),
            (.logFormat, logFormat), (.forwardForm, forwardForm), (.helpURL, helpURL), (.trustedProxies, trustedProxies),
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
