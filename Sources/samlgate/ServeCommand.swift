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
    /// One flag per setting, made from the settings' definitions (see ``ServeFlags``).
    @OptionGroup var flags: ServeFlags

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
            let url = "\(configuration.tlsCertificate == nil ? "http" : "https")://\(configuration.host):\(port)"
            // The probe listener (`plain-port`), when there is one.
            var probes = ""
            if configuration.plainPort != nil { probes = "http://\(configuration.host):\(await server.plainPort.value())" }
            let protocols =
                configuration.tlsCertificate == nil
                ? (configuration.h2c ? "HTTP/1.1, h2c" : "HTTP/1.1") : (configuration.http2 ? "TLS: h2, HTTP/1.1" : "TLS: HTTP/1.1")
            let upstreams = configuration.upstreams.joined(separator: ", ")
            let workers = configuration.workerCount, eventLoops = configuration.eventLoopCount
            let mvpds = server.core.trustStore.current.providers.count
            let allocator = MemoryAllocator.description
            // The replay store as configured, its password masked; named only when shared.
            let replayStore = configuration.replayStore.description
            let shared = configuration.replayStore == .memory ? "" : ", replay store \(replayStore)"
            let tracingEndpoint = configuration.tracingEndpoint.map(GatewayConfiguration.maskedForLogs)
            let tracing = tracingEndpoint.map { ", tracing to \($0) at ratio \(configuration.tracingSampleRatio)" } ?? ""
            console.listening(
                "samlgate gateway listening on \(url) (\(protocols)\(probes.isEmpty ? "" : "; probes on \(probes)")) -> \(upstreams) "
                    + "(\(eventLoops) event loops, \(workers) workers, \(mvpds) MVPDs\(shared)\(tracing), allocator \(allocator))",
                fields: [
                    "url": .string(url), "protocols": .string(protocols), "probesURL": .string(probes.isEmpty ? "none" : probes),
                    "upstreams": .string(upstreams), "workers": .stringConvertible(workers),
                    "eventLoops": .stringConvertible(eventLoops),
                    "mvpds": .stringConvertible(mvpds), "replayStore": .string(replayStore), "allocator": .string(allocator),
                    "tracing": .string(tracingEndpoint ?? "off"),
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
        if let format = flags.value(of: .logFormat).flatMap({ LogFormat(rawValue: $0.lowercased()) }) { return format }
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
        for (setting, values) in flags.given {
            try configuration.apply(setting, values: values, source: "--\(setting.rawValue)")
        }
        return configuration
    }
}

// MARK: - Flags

/// The flags of `samlgate serve`: one per ``GatewaySetting``, named after it, with the help and
/// the form (`--name VALUE`, `--name` alone, repeatable) its ``GatewaySetting/definition`` gives.
///
/// ArgumentParser finds the options of a type by reflecting an instance of it (`Mirror`), which
/// usually lists one property wrapper per option. This type supplies that mirror itself: one
/// `Option` or `Flag` per setting, labelled with the setting's name, so the flags, their
/// spelling and their `--help` are derived from the settings instead of declared a second time.
/// Decoding reads the same labels back. The values stay text: they are read, with the file's
/// and the environment's, by ``GatewayConfiguration/apply(_:values:source:)``.
struct ServeFlags: ParsableArguments, CustomReflectable {
    /// The settings given on the command line, in ``GatewaySetting`` order, with their values.
    private(set) var given: [(setting: GatewaySetting, values: [String])] = []

    init() {}

    /// The last value given for `setting`, if any.
    func value(of setting: GatewaySetting) -> String? {
        given.last { $0.setting == setting }?.values.last
    }

    /// A setting's name as the key of its option.
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for setting in GatewaySetting.allCases {
            let key = Key(stringValue: setting.rawValue)
            switch setting.definition.form {
            case .value:
                if let value = try container.decode(Option<String?>.self, forKey: key).wrappedValue {
                    given.append((setting, [value]))
                }
            case .flag:
                if try container.decode(Flag<Bool>.self, forKey: key).wrappedValue { given.append((setting, ["true"])) }
            case .list:
                let values = try container.decode(Option<[String]>.self, forKey: key).wrappedValue
                if !values.isEmpty { given.append((setting, values)) }
            }
        }
    }

    var customMirror: Mirror {
        Mirror(
            self,
            children: GatewaySetting.allCases.map { setting -> Mirror.Child in
                let definition = setting.definition
                let name = NameSpecification.customLong(setting.rawValue)
                let help = ArgumentHelp(definition.help)
                switch definition.form {
                case .value: return (setting.rawValue, Option<String?>(name: name, help: help))
                case .flag: return (setting.rawValue, Flag<Bool>(wrappedValue: false, name: name, help: help))
                case .list: return (setting.rawValue, Option<[String]>(wrappedValue: [], name: name, help: help))
                }
            })
    }
}
