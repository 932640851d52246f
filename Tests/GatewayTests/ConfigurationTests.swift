import Foundation
@_spi(Benchmarks) import Gateway
import ServerSupport
import Testing

@Suite("Gateway configuration")
struct ConfigurationTests {
    @Test("defaults, then file, then environment, then flags")
    func layering() throws {
        var configuration = GatewayConfiguration()
        #expect(configuration.port == 8080 && configuration.queue == 256 && configuration.bodyLimit == 1 << 20)
        try configuration.apply(
            yaml: """
                port: 9000
                workers: 3
                upstreams:
                  - http://a:1
                  - http://b:2
                trust-store: /tmp/t
                forward-form: signature-preserving
                """, path: "test.yaml")
        #expect(configuration.port == 9000 && configuration.workers == 3)
        #expect(configuration.upstreams == ["http://a:1", "http://b:2"])
        #expect(configuration.forwardForm == .signaturePreserving)
        try configuration.apply(environment: ["SAMLGATE_PORT": "9100", "SAMLGATE_UPSTREAM": "http://c:3,http://d:4", "SAMLGATE_ALLOW_SHA1": "true"])
        #expect(configuration.port == 9100 && configuration.allowSHA1)
        #expect(configuration.upstreams == ["http://c:3", "http://d:4"])
        try configuration.apply(.port, value: "9200", source: "--port")
        #expect(configuration.port == 9200)
        #expect(try configuration.validated().workerCount == 3)
    }

    @Test("bad values and unknown keys name the setting and the source")
    func errors() {
        var configuration = GatewayConfiguration()
        #expect(throws: ConfigurationError.self) { try configuration.apply(yaml: "prot: 1", path: "x.yaml") }
        do {
            try configuration.apply(environment: ["SAMLGATE_QUEUE": "many"])
            Issue.record("accepted a bad queue")
        } catch {
            #expect(error.message.contains("SAMLGATE_QUEUE") && error.message.contains("queue"))
        }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.upstream, value: "ftp://x", source: "--upstream") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.forwardForm, value: "other", source: "--forward-form") }
        // The poll hashes the whole store: no faster than once a second (0 turns it off).
        #expect(throws: ConfigurationError.self) { try configuration.apply(.trustStorePoll, value: "0.01", source: "--trust-store-poll") }
        #expect(throws: Never.self) { try configuration.apply(.trustStorePoll, value: "0", source: "--trust-store-poll") }
        #expect(throws: Never.self) { try configuration.apply(.trustStorePoll, value: "1", source: "--trust-store-poll") }
        // The metadata settings: a cache directory, a refresh of at least a second, a bounded fetch.
        #expect(throws: ConfigurationError.self) { try configuration.apply(.metadataCache, value: "", source: "--metadata-cache") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.metadataRefresh, value: "0.5", source: "--metadata-refresh") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.metadataTimeout, value: "0", source: "--metadata-timeout") }
        #expect(throws: ConfigurationError.self) { try configuration.apply(.metadataTimeout, value: "601", source: "--metadata-timeout") }
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration().validated() }
        var short = GatewayConfiguration()
        short.upstreams = ["http://a:1"]
        short.trustStore = "/tmp"
        short.totalTimeout = 0.5
        #expect(throws: ConfigurationError.self) { try short.validated() }
    }

    @Test("the shipped example configuration loads and has every setting")
    func example() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/samlgate.example.yaml").path
        var configuration = GatewayConfiguration()
        try configuration.apply(file: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for setting in GatewaySetting.allCases {
            #expect(text.contains(setting.fileKey + ":"), "example lacks \(setting.fileKey)")
        }
    }
}
