import ArgumentParser
import Logging
import ReferenceUpstream
import ServerSupport

/// `samlgate upstream`: the in-memory reference backend, to run the gateway against on one
/// machine (tests, demos, load).
struct UpstreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upstream",
        abstract: "Run the reference upstream (an in-memory stand-in for the authentication backend).")

    @Option(help: "Listen address.") var host = "127.0.0.1"
    @Option(help: "Listen port; 0 picks a free one.") var port = 9090
    @Option(help: "YAML file with requestors, MVPDs and lifetimes (default: the built-in REF configuration).") var config: String?
    @Option(name: .customLong("token-ttl"), help: "Lifetime of the authentication tokens and profiles it issues, seconds (overrides the file).")
    var tokenTTL: Double?
    @Option(name: .customLong("exchange-log"), help: "How many token exchanges GET /reference/exchanges keeps (0: none).")
    var exchangeLog = ReferenceStore.defaultExchangeLimit
    @Option(name: .customLong("log-level"), help: "trace|debug|info|notice|warning|error|critical.") var logLevel = "notice"
    @Option(name: .customLong("log-format"), help: "json|text.") var logFormat = "json"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0...65535") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: unknown level \(logLevel)") }
        guard logFormat == "json" || logFormat == "text" else { throw ValidationError("--log-format must be json or text") }
        guard (0...1_000_000).contains(exchangeLog) else { throw ValidationError("--exchange-log must be in 0...1000000") }
        if let tokenTTL, !ReferenceConfiguration.validLifetime(tokenTTL) { throw ValidationError("--token-ttl must be 1 second … 10 years") }
    }

    func run() async throws {
        let console = ServerConsole(json: logFormat == "json", label: "samlgate.upstream", command: "samlgate upstream")
        var configuration = ReferenceConfiguration.standard
        if let config {
            do {
                configuration = try ReferenceConfiguration.load(path: config)
            } catch {
                console.fail(error.message)
                throw ExitCode(2)
            }
        }
        if let tokenTTL { configuration.authenticationTTL = tokenTTL }
        ServerLogging.bootstrap(level: Logger.Level(rawValue: logLevel) ?? .notice, format: logFormat)
        let server = ReferenceUpstreamServer(
            host: host, port: port, configuration: configuration, exchangeLog: exchangeLog,
            logger: Logger(label: "samlgate.upstream"), signals: true)
        Task {
            let url = "http://\(host):\(await server.port.value())"
            let allocator = MemoryAllocator.description
            console.listening(
                "samlgate reference upstream listening on \(url) (allocator \(allocator))",
                fields: ["url": .string(url), "allocator": .string(allocator)])
        }
        do {
            try await server.run()
        } catch {
            console.fail("\(error)")
            throw ExitCode.failure
        }
    }
}
