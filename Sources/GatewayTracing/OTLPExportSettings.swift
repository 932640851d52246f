import Foundation
import Gateway
import NIOCore
import ServerSupport

/// Where and how the spans are exported: the `tracing-*` settings, and over them the standard
/// OpenTelemetry exporter variables a collector's operator expects to set.
struct OTLPExportSettings: Sendable {
    /// The OTLP/HTTP traces URL.
    var endpoint: String
    var serviceName: String
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`), after `service.name`.
    var resourceAttributes: [(String, String)] = []
    /// Sent with every export (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`): a collector's credentials.
    var headers: [(String, String)] = []
    /// One export's time (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, ms): 3 s.
    var timeout = TimeAmount.seconds(3)
    /// Between two exports at most (`OTEL_BSP_SCHEDULE_DELAY`, ms): 5 s.
    var scheduleDelay = Duration.seconds(5)
    /// Spans waiting at most (`OTEL_BSP_MAX_QUEUE_SIZE`): 2048; more are dropped.
    var queueCapacity = 2048
    /// Spans in one export at most (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`): 512.
    var batchSize = 512
    /// The last export's time at shutdown (`OTEL_BSP_EXPORT_TIMEOUT`, ms): 5 s, so that a
    /// collector that is down does not outlast a Kubernetes pod's default grace period.
    var shutdownTimeout = TimeAmount.seconds(5)

    /// The settings of `configuration` (its `tracing-endpoint` set), with these variables of
    /// `environment` over them; each `_TRACES_` one before its general `OTEL_EXPORTER_OTLP_` form:
    /// - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`;
    /// - `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`name=value,…`, values percent-encoded);
    /// - `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_EXPORT_TIMEOUT`
    ///   (milliseconds), `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`;
    /// - `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` and `…_COMPRESSION`: only `http/protobuf` and `none`
    ///   are built in; another value is a configuration error rather than spans a collector
    ///   would not read.
    ///
    /// A malformed value is a ``ConfigurationError`` naming the variable.
    init(configuration: GatewayConfiguration, environment: [String: String]) throws(ConfigurationError) {
        endpoint = configuration.tracingEndpoint ?? ""
        serviceName = configuration.tracingServiceName
        let variables = OTelVariables(environment)
        if let value = variables.exporter("ENDPOINT") {
            guard let url = URL(string: value.text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw value.bad("an OTLP/HTTP traces URL")
            }
            endpoint = value.text
        }
        if let value = variables["OTEL_SERVICE_NAME"], !value.text.isEmpty { serviceName = value.text }
        if let value = variables["OTEL_RESOURCE_ATTRIBUTES"] {
            resourceAttributes = try value.pairs().filter { $0.0 != "service.name" }
        }
        if let value = variables.exporter("HEADERS") { headers = try value.pairs() }
        if let value = variables.exporter("PROTOCOL"), value.text != "http/protobuf" {
            throw value.bad("http/protobuf (the only OTLP protocol built in)")
        }
        if let value = variables.exporter("COMPRESSION"), value.text != "none" { throw value.bad("none (no compression is built in)") }
        if let value = variables.exporter("TIMEOUT") { timeout = .milliseconds(Int64(try value.milliseconds())) }
        if let value = variables["OTEL_BSP_SCHEDULE_DELAY"] { scheduleDelay = .milliseconds(try value.milliseconds()) }
        if let value = variables["OTEL_BSP_EXPORT_TIMEOUT"] { shutdownTimeout = .milliseconds(Int64(try value.milliseconds())) }
        if let value = variables["OTEL_BSP_MAX_QUEUE_SIZE"] { queueCapacity = try value.count() }
        if let value = variables["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] { batchSize = try value.count() }
        guard batchSize <= queueCapacity else {
            throw ConfigurationError("OTEL_BSP_MAX_EXPORT_BATCH_SIZE (\(batchSize)) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (\(queueCapacity))")
        }
    }
}

/// The `OTEL_*` variables of an environment, each read with its name for the error it may raise.
private struct OTelVariables {
    struct Value {
        let name: String
        let text: String

        func bad(_ expected: String) -> ConfigurationError {
            ConfigurationError("\(name): expected \(expected), got \(text.debugDescription)")
        }

        func milliseconds() throws(ConfigurationError) -> Int {
            guard let number = Int(text), (1...3_600_000).contains(number) else { throw bad("milliseconds, 1 to 3600000") }
            return number
        }

        func count() throws(ConfigurationError) -> Int {
            guard let number = Int(text), (1...1_000_000).contains(number) else { throw bad("a number of spans, 1 to 1000000") }
            return number
        }

        /// `key=value` pairs separated by commas, values percent-decoded (the W3C Baggage form
        /// OpenTelemetry's specification gives these variables).
        func pairs() throws(ConfigurationError) -> [(String, String)] {
            var pairs: [(String, String)] = []
            for member in text.split(separator: ",") {
                let parts = member.split(separator: "=", maxSplits: 1)
                let key = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                guard parts.count == 2, !key.isEmpty, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
                    let value = parts[1].trimmingCharacters(in: .whitespaces).removingPercentEncoding,
                    !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
                else { throw bad("name=value pairs separated by commas, values percent-encoded") }
                pairs.append((key, value))
            }
            return pairs
        }
    }

    private let environment: [String: String]

    init(_ environment: [String: String]) {
        self.environment = environment
    }

    subscript(name: String) -> Value? {
        environment[name].map { Value(name: name, text: $0) }
    }

    /// `OTEL_EXPORTER_OTLP_TRACES_<suffix>`, else `OTEL_EXPORTER_OTLP_<suffix>` (but the endpoint:
    /// the general one is a base URL, not the traces URL).
    func exporter(_ suffix: String) -> Value? {
        self["OTEL_EXPORTER_OTLP_TRACES_" + suffix] ?? (suffix == "ENDPOINT" ? nil : self["OTEL_EXPORTER_OTLP_" + suffix])
    }
}
