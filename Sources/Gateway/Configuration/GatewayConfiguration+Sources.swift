import Foundation
import Logging
import RESP
import SAMLVerification
import ServerSupport
import Yams

extension GatewayConfiguration {
    /// Sets one setting from its text form (read as its ``GatewaySetting/definition`` says).
    /// `source` names where it came from, for the error. `upstream` appends (flags and the file
    /// give several); the caller clears the list first when a higher layer replaces it.
    package mutating func apply(_ setting: GatewaySetting, value: String, source: String) throws(ConfigurationError) {
        try setting.definition.read(&self, SettingValue(text: value, setting: setting, source: source))
    }

    /// Sets `setting` from the values one layer gives it: the list setting (`upstream`) becomes
    /// exactly those values, any other takes each in turn (the last one wins).
    package mutating func apply(_ setting: GatewaySetting, values: [String], source: String) throws(ConfigurationError) {
        if setting == .upstream { upstreams = [] }
        for value in values { try apply(setting, value: value, source: source) }
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
                let items: [Any] = (value as? [Any]) ?? [value]
                try apply(.upstream, values: items.map(Self.scalarText), source: "\(path): upstreams")
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
            try apply(setting, values: [value], source: "environment \(setting.environmentName)")
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
        if replayStoreReplicas > 0 {
            guard case .redis = replayStore else {
                throw ConfigurationError("replay-store-replicas is set but replay-store is not a redis:// URL: only Redis has replicas")
            }
            guard replayStoreReplicaWait < replayStoreTimeout else {
                throw ConfigurationError(
                    "replay-store-replica-wait (\(replayStoreReplicaWait) s) must be shorter than replay-store-timeout (\(replayStoreTimeout) s)")
            }
        }
        try validateTLS()
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
        if let file = replayStoreSentinelPasswordFile {
            guard case .redis(var url) = result.replayStore, url.sentinel != nil else {
                throw ConfigurationError("replay-store-sentinel-password-file is set but replay-store is not a redis-sentinel:// URL")
            }
            url.sentinel?.password = try Self.password(inFile: file, setting: "replay-store-sentinel-password-file")
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

    /// The TLS settings that only make sense together (the files themselves are read by
    /// ``ServerTLS`` and ``UpstreamTLS``, which name the file that does not load).
    private func validateTLS() throws(ConfigurationError) {
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ConfigurationError("tls-certificate and tls-key go together: give both, or neither for plain HTTP")
        }
        let tls = tlsCertificate != nil
        if !tls {
            for (name, set) in [("tls-client-ca", tlsClientCA != nil), ("tls-client-auth", tlsClientAuth != .none), ("plain-port", plainPort != nil)]
            where set {
                throw ConfigurationError("\(name) is set but tls-certificate is not: the listener is plain HTTP")
            }
        } else if h2c {
            throw ConfigurationError("h2c is for a plain listener: with tls-certificate, HTTP/2 is offered over TLS (http2)")
        }
        if tlsClientAuth != .none && tlsClientCA == nil {
            throw ConfigurationError("tls-client-auth is \(tlsClientAuth.rawValue) but tls-client-ca is not set: client certificates chain to it")
        }
        if tlsClientCA != nil && tlsClientAuth == .none {
            throw ConfigurationError("tls-client-ca is set but tls-client-auth is none: set it to optional or require")
        }
        if let plainPort, plainPort != 0, plainPort == port {
            throw ConfigurationError("plain-port \(plainPort) is the TLS listener's port too")
        }
        guard (upstreamTLSCertificate == nil) == (upstreamTLSKey == nil) else {
            throw ConfigurationError("upstream-tls-certificate and upstream-tls-key go together: give both, or neither")
        }
        if upstreamTLSCertificate != nil || upstreamCA != nil, !upstreams.contains(where: { $0.lowercased().hasPrefix("https://") }) {
            throw ConfigurationError("upstream-tls-certificate or upstream-ca is set but no upstream is an https:// URL")
        }
    }

    /// The password in `path`: its first line (a trailing line break is the editor's, not the
    /// password's). Never quoted in an error.
    static func password(inFile path: String, setting: String = "replay-store-password-file") throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
            throw ConfigurationError("\(setting) \(path): cannot be read (or is over 4 KiB)")
        }
        let text = String(decoding: data, as: UTF8.self)
        let password =
            text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map {
                String($0.hasSuffix("\r") ? $0.dropLast() : $0)
            } ?? ""
        guard !password.isEmpty else { throw ConfigurationError("\(setting) \(path): is empty") }
        return password
    }

    static func scalarText(_ value: Any) -> String {
        if let bool = value as? Bool { return bool ? "true" : "false" }
        return "\(value)"
    }
}
