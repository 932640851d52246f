import Foundation
import Logging
import RESP
import SAMLVerification
import ServerSupport
import Yams

extension GatewayConfiguration {
    /// Sets one setting from its text form. `source` names where it came from, for the error.
    /// `upstream` appends (flags and the file give several); the caller clears the list first
    /// when a higher layer replaces it.
    package mutating func apply(_ setting: GatewaySetting, value: String, source: String) throws(ConfigurationError) {
        func bad(_ expected: String) -> ConfigurationError {
            ConfigurationError("\(source): \(setting.rawValue) must be \(expected), got \"\(value)\"")
        }
        func integer(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard let number = Int(value), range.contains(number) else {
                throw bad("an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        func boolean() throws(ConfigurationError) -> Bool {
            switch value.lowercased() {
            case "true", "yes", "1", "on": return true
            case "false", "no", "0", "off": return false
            default: throw bad("true or false")
            }
        }
        /// The value itself, refused when empty.
        func nonEmpty(_ expected: String) throws(ConfigurationError) -> String {
            guard !value.isEmpty else { throw bad(expected) }
            return value
        }
        /// A number within `range`, else `expected` is what the message asks for.
        func number(in range: ClosedRange<Double>, _ expected: String) throws(ConfigurationError) -> Double {
            guard let number = Double(value), range.contains(number) else { throw bad(expected) }
            return number
        }
        func seconds() throws(ConfigurationError) -> Double {
            guard let number = Double(value), number > 0, number.isFinite else { throw bad("a positive number of seconds") }
            return number
        }
        switch setting {
        case .host:
            host = try nonEmpty("a host name or address")
        case .port: port = try integer(0...65535)
        case .upstream:
            for item in value.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                guard let url = URL(string: item), url.scheme == "http" || url.scheme == "https", url.host != nil,
                    url.query == nil
                else {
                    throw bad("an http(s) base URL such as http://127.0.0.1:9090")
                }
                upstreams.append(item.hasSuffix("/") ? String(item.dropLast()) : item)
            }
        case .trustStore: trustStore = value
        case .audience:
            audience = try nonEmpty("a URI")
        case .skew:
            skew = try number(in: 0...3600, "seconds in 0...3600")
        case .allowSHA1:
            allowSHA1 = try boolean()
        case .allowUnderscoreHeaders:
            allowUnderscoreHeaders = try boolean()
        case .workers: workers = try integer(0...1024)
        case .eventLoops: eventLoops = try integer(0...1024)
        case .queue: queue = try integer(0...1_000_000)
        case .bodyLimit: bodyLimit = try integer(1024...(64 << 20))
        case .connectTimeout: connectTimeout = try seconds()
        case .readTimeout: readTimeout = try seconds()
        case .totalTimeout: totalTimeout = try seconds()
        case .idleTimeout: idleTimeout = try seconds()
        case .headerTimeout: headerTimeout = try seconds()
        case .poolSize: poolSize = try integer(1...10_000)
        case .upstreamCooldown: upstreamCooldown = try seconds()
        case .upstreamHealthPath:
            if value.isEmpty || value.lowercased() == "none" {
                upstreamHealthPath = nil
            } else {
                // Sent as the request target of every probe: a path, nothing a head could not carry.
                guard value.hasPrefix("/"), value.utf8.count <= 2048, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") })
                else {
                    throw bad("a path beginning with / (printable ASCII, no spaces), or none")
                }
                upstreamHealthPath = value
            }
        case .upstreamHealthInterval:
            // A floor: every probe is a new connection to each upstream.
            upstreamHealthInterval = try number(in: 0.1...3600, "seconds in 0.1...3600")
        case .upstreamHealthTimeout:
            upstreamHealthTimeout = try number(in: 0.01...60, "seconds in 0.01...60")
        case .upstreamHealthRise: upstreamHealthRise = try integer(1...100)
        case .upstreamHealthFall: upstreamHealthFall = try integer(1...100)
        case .replayCapacity: replayCapacity = try integer(1...100_000_000)
        case .replayStore:
            if value.lowercased() == "memory" {
                replayStore = .memory
            } else {
                do {
                    replayStore = .redis(try RedisURL(parsing: value))
                } catch {
                    // The message never repeats the value: it may hold a password.
                    throw ConfigurationError(
                        "\(source): replay-store must be memory or redis://[user:password@]host:port[/db] (or rediss://…): \(error.message)")
                }
            }
        case .replayStoreFailure:
            guard let policy = ReplayStoreFailurePolicy(rawValue: value.lowercased()) else { throw bad("closed or open") }
            replayStoreFailure = policy
        case .replayStoreTimeout: replayStoreTimeout = try seconds()
        case .replayStoreConnections: replayStoreConnections = try integer(1...64)
        case .replayStoreCA:
            replayStoreCA = try nonEmpty("a PEM file of certificate authorities")
        case .replayStorePasswordFile:
            replayStorePasswordFile = try nonEmpty("a file holding the Redis password")
        case .trustStorePoll:
            // A floor of a second: each check reads and hashes every file of the store (an
            // aggregate can be tens of MiB), and Kubernetes publishes a change within a minute.
            guard let number = Double(value), number == 0 || (number >= 1 && number <= 86_400) else {
                throw bad("0 (off) or seconds in 1...86400")
            }
            trustStorePoll = number
        case .metadataCache:
            metadataCache = try nonEmpty("a writable directory")
        case .metadataRefresh:
            metadataRefresh = try number(in: 1...(7 * 86_400), "seconds in 1...604800")
        case .metadataTimeout:
            guard let number = Double(value), number > 0, number <= 600 else { throw bad("seconds in (0, 600]") }
            metadataTimeout = number
        case .metadataMinRefetch:
            metadataMinRefetch = try number(in: 1...86_400, "seconds in 1...86400")
        case .logLevel:
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                throw bad("one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            logLevel = level
        case .logFormat:
            guard let format = LogFormat(rawValue: value.lowercased()) else { throw bad("json or text") }
            logFormat = format
        case .forwardForm:
            guard let form = ForwardForm(rawValue: value.lowercased()) else { throw bad("cookbook or signature-preserving") }
            forwardForm = form
        case .helpURL:
            // `none` leaves helpUrl out; anything else must be an absolute http(s) address, as
            // the backend documents the field.
            if value.lowercased() == "none" {
                helpURL = nil
            } else {
                let lower = value.lowercased()
                guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), !value.contains(where: \.isWhitespace) else {
                    throw bad("an absolute http(s) URL, or none")
                }
                helpURL = value
            }
        case .errorDetails:
            guard let details = ErrorDetails(rawValue: value.lowercased()) else { throw bad("reason or none") }
            errorDetails = details
        case .mode:
            guard let parsed = EnforcementMode(rawValue: value.lowercased()) else { throw bad("enforce or report-only") }
            mode = parsed
        case .throttleExchanges, .throttlePassThrough:
            let (rate, valid) = ThrottleRate.parse(value)
            guard valid else { throw bad("RATE/BURST (requests a second / requests at once beyond it, e.g. 1/10) or off") }
            if setting == .throttleExchanges { throttleExchanges = rate } else { throttlePassThrough = rate }
        case .throttleStore:
            switch value.lowercased() {
            case "memory": throttleShared = false
            case "shared": throttleShared = true
            default: throw bad("memory or shared")
            }
        case .maxConnections: maxConnections = try integer(0...10_000_000)
        case .maxConnectionsPerClient: maxConnectionsPerClient = try integer(0...10_000_000)
        case .tracingEndpoint:
            if value.lowercased() == "none" || value.isEmpty {
                tracingEndpoint = nil
            } else {
                guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw bad("an OTLP/HTTP traces URL such as http://127.0.0.1:4318/v1/traces, or none")
                }
                tracingEndpoint = value
            }
        case .tracingSampleRatio:
            tracingSampleRatio = try number(in: 0...1, "a ratio in 0...1")
        case .tracingServiceName:
            guard !value.isEmpty, value.utf8.count <= 255, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw bad("a name of printable ASCII without spaces, at most 255 bytes")
            }
            tracingServiceName = value
        case .auditLog:
            auditLog = try nonEmpty("a file to append the audit trail to, or - for standard output")
        case .auditKeyFile:
            auditKeyFile = try nonEmpty("a file holding the audit key")
        case .trustedProxies:
            // One value is the whole list (comma-separated): a higher layer replaces it.
            do {
                trustedProxies = try TrustedProxies(parsing: value)
            } catch {
                throw ConfigurationError("\(source): trusted-proxies: \(error.message)")
            }
        }
    }

    /// Applies a YAML file of `key: value` pairs (keys as in ``GatewaySetting``; `upstreams` is
    /// a list). Unknown keys are errors, so a typo cannot silently leave a default in place.
    /// Anchors, aliases, deep nesting and large files are refused before Yams builds anything
    /// (see ``ConfigurationFile``).
    package mutating func apply(yaml text: String, path: String) throws(ConfigurationError) {
        try ConfigurationFile.check(yaml: text, path: path)
        let root: Any?
        do {
            root = try Yams.load(yaml: text)
        } catch {
            throw ConfigurationError("\(path): not valid YAML (\(error))")
        }
        guard let root else { return }
        guard let map = root as? [String: Any] else {
            throw ConfigurationError("\(path): expected a mapping of settings at the top level")
        }
        let byKey = Dictionary(uniqueKeysWithValues: GatewaySetting.allCases.map { ($0.fileKey, $0) })
        for key in map.keys.sorted() {
            guard let setting = byKey[key] else {
                throw ConfigurationError("\(path): unknown setting \"\(key)\" (known: \(byKey.keys.sorted().joined(separator: ", ")))")
            }
            let value = map[key]!
            if setting == .upstream {
                upstreams = []
                let items: [Any] = (value as? [Any]) ?? [value]
                for item in items {
                    try apply(.upstream, value: Self.scalarText(item), source: "\(path): upstreams")
                }
            } else if setting == .trustedProxies, let items = value as? [Any] {
                try apply(.trustedProxies, value: items.map(Self.scalarText).joined(separator: ","), source: path)
            } else {
                try apply(setting, value: Self.scalarText(value), source: path)
            }
        }
    }

    /// Reads and applies the file at `path`.
    package mutating func apply(file path: String) throws(ConfigurationError) {
        try apply(yaml: ConfigurationFile.read(path), path: path)
    }

    /// The `log-format` the file at `path` sets, when the file is readable and the value valid:
    /// the format to report errors in when the rest of the configuration is broken.
    package static func logFormat(inFile path: String) -> LogFormat? {
        guard let text = try? ConfigurationFile.read(path), let map = (try? Yams.load(yaml: text)) as? [String: Any],
            let value = map[GatewaySetting.logFormat.fileKey]
        else { return nil }
        return LogFormat(rawValue: scalarText(value).lowercased())
    }

    /// Applies every `SAMLGATE_*` variable present in `environment`.
    package mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for setting in GatewaySetting.allCases {
            guard let value = environment[setting.environmentName] else { continue }
            if setting == .upstream { upstreams = [] }
            try apply(setting, value: value, source: "environment \(setting.environmentName)")
        }
        if let key = environment[AuditKey.environmentName] { auditKeyFromEnvironment = key }
    }

    /// Checks the combination once every layer is applied.
    package func validated() throws(ConfigurationError) -> GatewayConfiguration {
        guard !upstreams.isEmpty else {
            throw ConfigurationError("no upstream: give --upstream URL, SAMLGATE_UPSTREAM or upstreams: in the file")
        }
        guard trustStore != nil else {
            throw ConfigurationError("no trust store: give --trust-store DIR, SAMLGATE_TRUST_STORE or trust-store: in the file")
        }
        guard totalTimeout >= readTimeout || totalTimeout >= connectTimeout else {
            throw ConfigurationError("total-timeout (\(totalTimeout) s) is shorter than both connect-timeout and read-timeout")
        }
        if throttleShared, case .memory = replayStore {
            throw ConfigurationError("throttle-store is shared but replay-store is not a redis:// or rediss:// URL: the buckets live in that Redis")
        }
        var result = self
        if let file = replayStorePasswordFile {
            guard case .redis(var url) = replayStore else {
                throw ConfigurationError("replay-store-password-file is set but replay-store is not a redis:// or rediss:// URL")
            }
            guard url.password == nil else {
                throw ConfigurationError("replay-store-password-file is set and the replay-store URL has a password too: give one")
            }
            url.password = try Self.password(inFile: file)
            result.replayStore = .redis(url)
        }
        if let file = auditKeyFile {
            result.auditKey = try AuditKey(file: file)
        } else if let key = auditKeyFromEnvironment {
            result.auditKey = try AuditKey(bytes: Array(key.utf8), source: "environment \(AuditKey.environmentName)")
        }
        result.auditKeyFromEnvironment = nil
        return result
    }

    /// The password in `path`: its first line (a trailing line break is the editor's, not the
    /// password's). Never quoted in an error.
    static func password(inFile path: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
            throw ConfigurationError("replay-store-password-file \(path): cannot be read (or is over 4 KiB)")
        }
        let text = String(decoding: data, as: UTF8.self)
        let password =
            text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map {
                String($0.hasSuffix("\r") ? $0.dropLast() : $0)
            } ?? ""
        guard !password.isEmpty else { throw ConfigurationError("replay-store-password-file \(path): is empty") }
        return password
    }

    static func scalarText(_ value: Any) -> String {
        if let bool = value as? Bool { return bool ? "true" : "false" }
        return "\(value)"
    }
}
