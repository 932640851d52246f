import Foundation
import Logging
import RESP
import SAMLVerification
import ServerSupport

/// The settings of `samlgate serve`, each declared once.
///
/// A setting has one name used everywhere: the YAML key (`trust-store:`), the flag
/// (`--trust-store`) and the environment variable (`SAMLGATE_TRUST_STORE`). Its ``definition``
/// holds the rest: how the command line gives it, what `--help` says of it (the default quoted
/// there is ``GatewayConfiguration``'s own), and how its text is read. `samlgate serve` builds
/// its flags and their help from the definitions, and the file and the environment are read
/// through them, so a setting is added here and as a typed field of ``GatewayConfiguration``,
/// nowhere else. The cases are in the order `--help` lists them.
package enum GatewaySetting: String, Sendable, CaseIterable {
    case host, port, upstream
    case trustStore = "trust-store"
    case audience, skew
    case allowSHA1 = "allow-sha1"
    case workers
    case eventLoops = "event-loops"
    case queue
    case bodyLimit = "body-limit"
    case connectTimeout = "connect-timeout"
    case readTimeout = "read-timeout"
    case totalTimeout = "total-timeout"
    case idleTimeout = "idle-timeout"
    case headerTimeout = "header-timeout"
    case poolSize = "pool-size"
    case upstreamCooldown = "upstream-cooldown"
    case upstreamHealthPath = "upstream-health-path"
    case upstreamHealthInterval = "upstream-health-interval"
    case upstreamHealthTimeout = "upstream-health-timeout"
    case upstreamHealthRise = "upstream-health-rise"
    case upstreamHealthFall = "upstream-health-fall"
    case replayCapacity = "replay-capacity"
    case replayStore = "replay-store"
    case replayStoreFailure = "replay-store-failure"
    case replayStoreTimeout = "replay-store-timeout"
    case replayStoreConnections = "replay-store-connections"
    case replayStoreReplicas = "replay-store-replicas"
    case replayStoreReplicaWait = "replay-store-replica-wait"
    case replayStoreCA = "replay-store-ca"
    case replayStorePasswordFile = "replay-store-password-file"
    case replayStoreSentinelPasswordFile = "replay-store-sentinel-password-file"
    case trustStorePoll = "trust-store-poll"
    case metadataCache = "metadata-cache"
    case metadataRefresh = "metadata-refresh"
    case metadataTimeout = "metadata-timeout"
    case metadataMinRefetch = "metadata-min-refetch"
    case logLevel = "log-level"
    case logFormat = "log-format"
    case forwardForm = "forward-form"
    case helpURL = "help-url"
    case errorDetails = "error-details"
    case trustedProxies = "trusted-proxies"
    case allowUnderscoreHeaders = "allow-underscore-headers"
    case mode
    case throttleExchanges = "throttle-exchanges"
    case throttlePassThrough = "throttle-pass-through"
    case throttleStore = "throttle-store"
    case maxConnections = "max-connections"
    case maxConnectionsPerClient = "max-connections-per-client"
    case maxStreamsPerClient = "max-streams-per-client"
    case maxProbeConnections = "max-probe-connections"
    case tracingEndpoint = "tracing-endpoint"
    case tracingSampleRatio = "tracing-sample-ratio"
    case tracingServiceName = "tracing-service-name"
    case auditLog = "audit-log"
    case auditKeyFile = "audit-key-file"
    case tlsCertificate = "tls-certificate"
    case tlsKey = "tls-key"
    case tlsClientCA = "tls-client-ca"
    case tlsClientAuth = "tls-client-auth"
    case tlsMinVersion = "tls-min-version"
    case tlsPoll = "tls-poll"
    case http2
    case h2c
    case plainPort = "plain-port"
    case http2AnswerBudget = "http2-answer-budget"
    case upstreamTLSCertificate = "upstream-tls-certificate"
    case upstreamTLSKey = "upstream-tls-key"
    case upstreamCA = "upstream-ca"

    /// `SAMLGATE_TRUST_STORE` for `trust-store`. `SAMLGATE_UPSTREAM` and `SAMLGATE_TRUSTED_PROXIES`
    /// take comma-separated lists.
    package var environmentName: String {
        "SAMLGATE_" + rawValue.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The YAML key; `upstreams` (a list) for the repeatable `upstream`.
    package var fileKey: String {
        self == .upstream ? "upstreams" : rawValue
    }
}

// MARK: - Definitions

extension GatewaySetting {
    /// The one declaration of each setting: its form on the command line, its help (with the
    /// default, where one is quoted, read from ``GatewayConfiguration``) and how its text is read.
    package var definition: Definition {
        switch self {
        case .host: .text(\.host, "a host name or address", help: "Listen address")
        case .port: .integer(\.port, 0...65535, help: "Listen port; 0 picks a free one")
        case .upstream:
            Definition(form: .list, help: "Backend base URL, e.g. http://127.0.0.1:9090 (repeatable)") {
                (configuration, value) throws(ConfigurationError) in
                for item in value.text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                    guard let url = URL(string: item), url.scheme == "http" || url.scheme == "https", url.host != nil,
                        url.query == nil
                    else {
                        throw value.bad("an http(s) base URL such as http://127.0.0.1:9090")
                    }
                    // Never sent, and an upstream's URL is a metric label and in the logs: refused
                    // rather than ignored, without repeating the secret.
                    guard url.user == nil, url.password == nil else {
                        throw ConfigurationError(
                            "\(value.source): upstream \(GatewayConfiguration.maskedForLogs(item)) carries a user or password, which the "
                                + "gateway never sends upstream (clients send their own credentials): remove them")
                    }
                    configuration.upstreams.append(item.hasSuffix("/") ? String(item.dropLast()) : item)
                }
            }
        case .trustStore:
            Definition(
                help: "Directory of <mvpd>/*.pem or <mvpd>/metadata.xml [+ issuer, platform-mapping-id], or metadata.xml + metadata.map"
            ) { configuration, value in configuration.trustStore = value.text }
        case .audience: .text(\.audience, "a URI", help: "Required audience")
        case .skew: .number(\.skew, in: 0...3600, "seconds in 0...3600", help: "Clock skew in seconds")
        case .allowSHA1: .boolean(\.allowSHA1, help: "Accept SHA-1 signatures and digests")
        case .workers: .integer(\.workers, 0...1024, help: "Verification worker threads; 0 = one per CPU the process may use")
        case .eventLoops: .integer(\.eventLoops, 0...1024, help: "Event loops serving connections; 0 = one per CPU the process may use")
        case .queue: .integer(\.queue, 0...1_000_000, help: "Requests that may wait for a worker before 503 overloaded")
        case .bodyLimit: .integer(\.bodyLimit, 1024...(64 << 20), help: "Largest request body in bytes")
        case .connectTimeout: .seconds(\.connectTimeout, help: "Upstream connect timeout, seconds")
        case .readTimeout: .seconds(\.readTimeout, help: "Upstream read timeout, seconds")
        case .totalTimeout: .seconds(\.totalTimeout, help: "Upstream deadline per request, seconds")
        case .idleTimeout: .seconds(\.idleTimeout, help: "Close a client connection silent this long, seconds")
        case .headerTimeout: .seconds(\.headerTimeout, help: "Time for a request head to arrive whole once begun, seconds")
        case .poolSize: .integer(\.poolSize, 1...10_000, help: "Idle keep-alive connections per upstream and event loop")
        case .upstreamCooldown: .seconds(\.upstreamCooldown, help: "Seconds a failing upstream is skipped")
        case .upstreamHealthPath:
            Definition(help: "Probe every upstream with GET of this path, e.g. /healthz (default none: passive health only)") {
                (configuration, value) throws(ConfigurationError) in
                let text = value.text
                if text.isEmpty || text.lowercased() == "none" {
                    configuration.upstreamHealthPath = nil
                    return
                }
                // Sent as the request target of every probe: a path, nothing a head could not carry.
                guard text.hasPrefix("/"), text.utf8.count <= 2048, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") })
                else {
                    throw value.bad("a path beginning with / (printable ASCII, no spaces), or none")
                }
                configuration.upstreamHealthPath = text
            }
        case .upstreamHealthInterval:
            // A floor: every probe is a new connection to each upstream.
            .number(\.upstreamHealthInterval, in: 0.1...3600, "seconds in 0.1...3600", help: "Seconds between two probes of an upstream")
        case .upstreamHealthTimeout: .number(\.upstreamHealthTimeout, in: 0.01...60, "seconds in 0.01...60", help: "Deadline of one probe, seconds")
        case .upstreamHealthRise: .integer(\.upstreamHealthRise, 1...100, help: "Probes passed in a row that put a down upstream back")
        case .upstreamHealthFall: .integer(\.upstreamHealthFall, 1...100, help: "Probes failed in a row that take an upstream out of rotation")
        case .replayCapacity: .integer(\.replayCapacity, 1...100_000_000, help: "Assertion ids remembered against replay")
        case .replayStore:
            Definition(
                help:
                    "memory, or redis://[user:password@]host:port[/db] / rediss://… shared by every replica, or behind Sentinel "
                    + "redis-sentinel://[user:password@]host:port[,host:port…][/db]#masterName / rediss-sentinel://…",
                default: Definition.defaults.replayStore.description
            ) { (configuration, value) throws(ConfigurationError) in
                if value.text.lowercased() == "memory" {
                    configuration.replayStore = .memory
                    return
                }
                do throws(RESPError) {
                    configuration.replayStore = .redis(try RedisURL(parsing: value.text))
                } catch {
                    // The message never repeats the value: it may hold a password.
                    throw ConfigurationError(
                        "\(value.source): replay-store must be memory, redis://[user:password@]host:port[/db] (or rediss://…) or redis-sentinel://…#masterName: \(error.message)"
                    )
                }
            }
        case .replayStoreFailure:
            .choice(\.replayStoreFailure, "closed or open", help: "closed|open: refuse (503) or accept unrecorded when Redis cannot answer")
        case .replayStoreTimeout: .seconds(\.replayStoreTimeout, help: "Redis connect and command timeout, seconds")
        case .replayStoreConnections: .integer(\.replayStoreConnections, 1...64, help: "Redis connections per event loop")
        case .replayStoreReplicas:
            .integer(\.replayStoreReplicas, 0...16, help: "Replicas that must confirm each record (WAIT) before it counts; 0 none")
        case .replayStoreReplicaWait:
            .seconds(\.replayStoreReplicaWait, help: "How long a record waits for replay-store-replicas, seconds")
        case .replayStoreCA:
            .optionalText(
                \.replayStoreCA, "a PEM file of certificate authorities", help: "For rediss://: PEM file of the CAs to trust (default: the system's)")
        case .replayStorePasswordFile:
            .optionalText(
                \.replayStorePasswordFile, "a file holding the Redis password", help: "File holding the Redis password (instead of one in the URL)")
        case .replayStoreSentinelPasswordFile:
            .optionalText(
                \.replayStoreSentinelPasswordFile, "a file holding the Sentinels' password",
                help: "For redis-sentinel://: file holding the Sentinels' own password (requirepass)")
        case .trustStorePoll:
            Definition(
                help: "Seconds between checks of the trust store for a change; 0 = SIGHUP only",
                default: Definition.shown(Definition.defaults.trustStorePoll)
            ) { (configuration, value) throws(ConfigurationError) in
                // A floor of a second: each check reads and hashes every file of the store (an
                // aggregate can be tens of MiB), and Kubernetes publishes a change within a minute.
                guard let number = Double(value.text), number == 0 || (number >= 1 && number <= 86_400) else {
                    throw value.bad("0 (off) or seconds in 1...86400")
                }
                configuration.trustStorePoll = number
            }
        case .metadataCache:
            .optionalText(
                \.metadataCache, "a writable directory",
                help: "Writable directory for the last good copy of fetched metadata (trust store metadata.url)")
        case .metadataRefresh:
            .number(
                \.metadataRefresh, in: 1...(7 * 86_400), "seconds in 1...604800",
                help: "Seconds between fetches of a metadata.url without metadata.refresh")
        case .metadataTimeout:
            Definition(help: "Deadline of one metadata fetch, seconds", default: Definition.shown(Definition.defaults.metadataTimeout)) {
                (configuration, value) throws(ConfigurationError) in
                guard let number = Double(value.text), number > 0, number <= 600 else { throw value.bad("seconds in (0, 600]") }
                configuration.metadataTimeout = number
            }
        case .metadataMinRefetch:
            .number(
                \.metadataMinRefetch, in: 1...86_400, "seconds in 1...86400",
                help: "Shortest time between two fetches of a source out of turn (a key not trusted), seconds")
        case .logLevel:
            .choice(
                \.logLevel, "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "),
                help: "trace|debug|info|notice|warning|error|critical")
        case .logFormat: .choice(\.logFormat, "json or text", help: "json|text")
        case .forwardForm: .choice(\.forwardForm, "cookbook or signature-preserving", help: "cookbook|signature-preserving")
        case .helpURL:
            Definition(help: "helpUrl of error bodies: a URL, or none (default: the backend's error-code page)") {
                (configuration, value) throws(ConfigurationError) in
                // `none` leaves helpUrl out; anything else must be an absolute http(s) address, as
                // the backend documents the field.
                let lower = value.text.lowercased()
                if lower == "none" {
                    configuration.helpURL = nil
                    return
                }
                guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), !value.text.contains(where: \.isWhitespace) else {
                    throw value.bad("an absolute http(s) URL, or none")
                }
                configuration.helpURL = value.text
            }
        case .errorDetails: .choice(\.errorDetails, "reason or none", help: "reason|none: samlgate's reason in the details of refusals")
        case .trustedProxies:
            Definition(help: "CIDR blocks whose X-Forwarded-* are believed, comma-separated (default none)") {
                (configuration, value) throws(ConfigurationError) in
                // One value is the whole list (comma-separated): a higher layer replaces it.
                do throws(ConfigurationError) {
                    configuration.trustedProxies = try TrustedProxies(parsing: value.text)
                } catch {
                    throw ConfigurationError("\(value.source): trusted-proxies: \(error.message)")
                }
            }
        case .allowUnderscoreHeaders:
            .boolean(
                \.allowUnderscoreHeaders,
                help: "Forward request headers with _ in the name (dropped by default: some backends read X_Forwarded_For as X-Forwarded-For)")
        case .mode:
            .choice(
                \.mode, "enforce or report-only",
                help: "enforce (refuse what fails verification) or report-only (forward it and report it), for MVPDs without a mode file")
        case .throttleExchanges:
            .throttle(
                \.throttleExchanges,
                help: "Token bucket per client on the exchanges: RATE/BURST (requests a second / beyond it at once), or off")
        case .throttlePassThrough: .throttle(\.throttlePassThrough, help: "The same on every other request passed through")
        case .throttleStore:
            Definition(
                help: "memory (each replica throttles alone) or shared (the exchange buckets in the replay store's Redis)",
                default: Definition.defaults.throttleShared ? "shared" : "memory"
            ) { (configuration, value) throws(ConfigurationError) in
                switch value.text.lowercased() {
                case "memory": configuration.throttleShared = false
                case "shared": configuration.throttleShared = true
                default: throw value.bad("memory or shared")
                }
            }
        case .maxConnections:
            .integer(\.maxConnections, 0...10_000_000, help: "Open client connections beyond which new ones are closed; 0 = no limit")
        case .maxConnectionsPerClient:
            .integer(
                \.maxConnectionsPerClient, 0...10_000_000,
                help: "Open connections from one peer address beyond which its new ones are closed; 0 = no limit")
        case .maxStreamsPerClient:
            .integer(
                \.maxStreamsPerClient, 0...10_000_000,
                help: "Open HTTP/2 streams from one peer address, over all its connections, beyond which new ones are refused "
                    + "(REFUSED_STREAM); 0 = the value of max-connections-per-client")
        case .maxProbeConnections:
            .integer(
                \.maxProbeConnections, 1...1_000_000,
                help: "Open connections to plain-port beyond which new ones are closed (apart from max-connections)")
        case .tracingEndpoint:
            Definition(
                help: "Export spans over OTLP/HTTP to this traces URL, e.g. http://127.0.0.1:4318/v1/traces (default none: tracing off)"
            ) { (configuration, value) throws(ConfigurationError) in
                if value.text.lowercased() == "none" || value.text.isEmpty {
                    configuration.tracingEndpoint = nil
                    return
                }
                guard let url = URL(string: value.text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw value.bad("an OTLP/HTTP traces URL such as http://127.0.0.1:4318/v1/traces, or none")
                }
                configuration.tracingEndpoint = value.text
            }
        case .tracingSampleRatio: .number(\.tracingSampleRatio, in: 0...1, "a ratio in 0...1", help: "Share of new traces recorded, 0...1")
        case .tracingServiceName:
            Definition(help: "service.name of the exported spans", default: Definition.defaults.tracingServiceName) {
                (configuration, value) throws(ConfigurationError) in
                let text = value.text
                guard !text.isEmpty, text.utf8.count <= 255, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw value.bad("a name of printable ASCII without spaces, at most 255 bytes")
                }
                configuration.tracingServiceName = text
            }
        case .auditLog:
            .optionalText(
                \.auditLog, "a file to append the audit trail to, or - for standard output",
                help: "Append one JSON line per token exchange decided to this file, or - for standard output (default none). Reopened on SIGHUP")
        case .auditKeyFile:
            .optionalText(
                \.auditKeyFile, "a file holding the audit key",
                help: "File holding the audit key (at least 32 bytes): lines then carry the NameID's HMAC as subject. Or SAMLGATE_AUDIT_KEY")
        case .tlsCertificate:
            .optionalText(\.tlsCertificate, "a PEM file", help: "Serve TLS with this certificate chain (PEM, leaf first; default none: plain HTTP)")
        case .tlsKey: .optionalText(\.tlsKey, "a PEM file", help: "The private key (PEM) of tls-certificate")
        case .tlsClientCA:
            .optionalText(\.tlsClientCA, "a PEM file", help: "Certificate authorities (PEM) client certificates must chain to")
        case .tlsClientAuth:
            .choice(\.tlsClientAuth, "none, optional or require", help: "none|optional|require: ask clients for a certificate (tls-client-ca)")
        case .tlsMinVersion: .choice(\.tlsMinVersion, "1.2 or 1.3", help: "1.2|1.3: the oldest TLS version accepted")
        case .tlsPoll:
            .number(
                \.tlsPoll, in: 0...86_400, "0 (off) or seconds in 0...86400",
                help: "Seconds between checks of the TLS files for a change; 0 = SIGHUP only")
        case .http2: .boolean(\.http2, help: "Offer HTTP/2 (ALPN h2) beside HTTP/1.1 on the TLS listener (default true)")
        case .h2c: .boolean(\.h2c, help: "Accept HTTP/2 with prior knowledge (h2c) beside HTTP/1.1 on a plain listener (default false)")
        case .http2AnswerBudget:
            .integer(
                \.http2AnswerBudget, 16_384...(256 << 20),
                help: "Bytes of answers an HTTP/2 connection holds for a client that does not read them; beyond it the backend is not read")
        case .plainPort:
            Definition(help: "With TLS on, a plain HTTP port serving /healthz, /readyz and /metrics only (default none; 0 picks a free one)") {
                (configuration, value) throws(ConfigurationError) in
                configuration.plainPort = value.text.lowercased() == "none" ? nil : try value.integer(0...65535)
            }
        case .upstreamTLSCertificate:
            .optionalText(
                \.upstreamTLSCertificate, "a PEM file", help: "Client certificate chain (PEM) presented to https:// upstreams (mutual TLS)")
        case .upstreamTLSKey: .optionalText(\.upstreamTLSKey, "a PEM file", help: "The private key (PEM) of upstream-tls-certificate")
        case .upstreamCA:
            .optionalText(\.upstreamCA, "a PEM file", help: "Certificate authorities (PEM) https:// upstreams must chain to (default: the system's)")
        }
    }

    /// How a setting is given on the command line.
    package enum Form: Sendable {
        /// `--name VALUE`.
        case value
        /// `--name` alone, which means `true` (the file and the environment take true or false).
        case flag
        /// `--name VALUE`, repeatable; the flags replace the list the file or environment gave.
        case list
    }

    /// A setting's form, help and reader (see ``GatewaySetting/definition``).
    package struct Definition {
        package let form: Form
        /// What `--help` says: the description, then ` (default …)` when a default is quoted, and
        /// a full stop.
        package let help: String
        /// Reads one value into the configuration; throws naming the source and the setting.
        let read: (inout GatewayConfiguration, SettingValue) throws(ConfigurationError) -> Void

        /// - Parameters:
        ///   - help: the description without its full stop.
        ///   - default: the default as `--help` quotes it; `nil` quotes none (a setting off or
        ///     empty by default says so in its description).
        init(
            form: Form = .value, help: String, default shown: String? = nil,
            read: @escaping (inout GatewayConfiguration, SettingValue) throws(ConfigurationError) -> Void
        ) {
            self.form = form
            self.help = shown.map { "\(help) (default \($0))." } ?? help + "."
            self.read = read
        }

        /// The defaults `--help` quotes.
        static let defaults = GatewayConfiguration()

        /// A number as `--help` and the settings write it: whole numbers without a fraction.
        static func shown(_ number: Double) -> String {
            number == number.rounded() ? String(Int(number)) : String(number)
        }

        // MARK: Common shapes

        /// Text that must not be empty.
        static func text(_ field: WritableKeyPath<GatewayConfiguration, String>, _ expected: String, help: String) -> Definition {
            Definition(help: help, default: defaults[keyPath: field]) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.nonEmpty(expected)
            }
        }

        /// Text that must not be empty, for a setting unset by default.
        static func optionalText(_ field: WritableKeyPath<GatewayConfiguration, String?>, _ expected: String, help: String) -> Definition {
            Definition(help: help) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.nonEmpty(expected)
            }
        }

        static func integer(_ field: WritableKeyPath<GatewayConfiguration, Int>, _ range: ClosedRange<Int>, help: String) -> Definition {
            Definition(help: help, default: String(defaults[keyPath: field])) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.integer(range)
            }
        }

        /// A positive number of seconds.
        static func seconds(_ field: WritableKeyPath<GatewayConfiguration, Double>, help: String) -> Definition {
            Definition(help: help, default: shown(defaults[keyPath: field])) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.seconds()
            }
        }

        /// A number within `range`, else `expected` is what the message asks for.
        static func number(
            _ field: WritableKeyPath<GatewayConfiguration, Double>, in range: ClosedRange<Double>, _ expected: String, help: String
        ) -> Definition {
            Definition(help: help, default: shown(defaults[keyPath: field])) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.number(in: range, expected)
            }
        }

        /// `true` or `false` (and their spellings); `--name` alone on the command line.
        static func boolean(_ field: WritableKeyPath<GatewayConfiguration, Bool>, help: String) -> Definition {
            Definition(form: .flag, help: help) { (configuration, value) throws(ConfigurationError) in
                configuration[keyPath: field] = try value.boolean()
            }
        }

        /// One of an enumeration's raw values, in any case.
        static func choice<Choice: RawRepresentable>(
            _ field: WritableKeyPath<GatewayConfiguration, Choice>, _ expected: String, help: String
        ) -> Definition where Choice.RawValue == String {
            Definition(help: help, default: defaults[keyPath: field].rawValue) { (configuration, value) throws(ConfigurationError) in
                guard let choice = Choice(rawValue: value.text.lowercased()) else { throw value.bad(expected) }
                configuration[keyPath: field] = choice
            }
        }

        /// A token bucket, `RATE/BURST`, or `off`.
        static func throttle(_ field: WritableKeyPath<GatewayConfiguration, ThrottleRate?>, help: String) -> Definition {
            Definition(help: help, default: defaults[keyPath: field]?.description ?? "off") { (configuration, value) throws(ConfigurationError) in
                let (rate, valid) = ThrottleRate.parse(value.text)
                guard valid else { throw value.bad("RATE/BURST (requests a second / requests at once beyond it, e.g. 1/10) or off") }
                configuration[keyPath: field] = rate
            }
        }
    }
}

// MARK: - Values

/// One setting's text as one source gave it, with what an error names: the source (a file, an
/// environment variable, a flag) and the setting.
struct SettingValue {
    let text: String
    let setting: GatewaySetting
    let source: String

    func bad(_ expected: String) -> ConfigurationError {
        ConfigurationError("\(source): \(setting.rawValue) must be \(expected), got \"\(text)\"")
    }

    func integer(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw bad("an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    func boolean() throws(ConfigurationError) -> Bool {
        switch text.lowercased() {
        case "true", "yes", "1", "on": return true
        case "false", "no", "0", "off": return false
        default: throw bad("true or false")
        }
    }

    /// The value itself, refused when empty.
    func nonEmpty(_ expected: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty else { throw bad(expected) }
        return text
    }

    /// A number within `range`, else `expected` is what the message asks for.
    func number(in range: ClosedRange<Double>, _ expected: String) throws(ConfigurationError) -> Double {
        guard let number = Double(text), range.contains(number) else { throw bad(expected) }
        return number
    }

    func seconds() throws(ConfigurationError) -> Double {
        guard let number = Double(text), number > 0, number.isFinite else { throw bad("a positive number of seconds") }
        return number
    }
}
