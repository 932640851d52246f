/// The names of the settings, shared by the YAML file, the environment and the flags.
package enum GatewaySetting: String, Sendable, CaseIterable {
    case host, port, upstream, audience, skew, workers, queue
    case eventLoops = "event-loops"
    case trustStore = "trust-store"
    case allowSHA1 = "allow-sha1"
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
    case replayStoreCA = "replay-store-ca"
    case replayStorePasswordFile = "replay-store-password-file"
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
    case tracingEndpoint = "tracing-endpoint"
    case tracingSampleRatio = "tracing-sample-ratio"
    case tracingServiceName = "tracing-service-name"
    case auditLog = "audit-log"
    case auditKeyFile = "audit-key-file"

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
