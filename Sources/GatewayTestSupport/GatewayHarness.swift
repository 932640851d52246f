import AsyncHTTPClient
import CLITestSupport
import Foundation
import Gateway
import GatewayTracing
import Logging
import NIOCore
import NIOHTTP1
import ReferenceUpstream
import SAMLEncoding
import TestIdP
import Testing

/// A reference upstream and a gateway on loopback ephemeral ports, in this process, plus an
/// HTTP client: every test speaks real HTTP to them.
package final class GatewayHarness: Sendable {
    package static let mvpd = "Cablevision"
    package static let platformMappingID = "cablevision-apple"
    package static let idpPair = try! IdPKeyPair.generate(.rsa2048, commonName: "harness IdP")
    package static let idp = try! TestIdentityProvider(keyPair: idpPair)
    package static let attackerIdP = try! TestIdentityProvider(keyPair: try! IdPKeyPair.generate(.rsa2048, commonName: "attacker"))
    package static let client = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: {
            var configuration = HTTPClient.Configuration()
            configuration.decompression = .disabled
            configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
            return configuration
        }())

    package let upstream: ReferenceUpstreamServer?
    package let gateway: GatewayServer
    package let gatewayURL: String
    /// The probe listener's (`plain-port`), when the configuration has one.
    package let probesURL: String?
    /// The client ``send(_:_:body:bytes:headers:via:to:)`` uses by default: one trusting the
    /// gateway's certificate when it serves TLS, else the shared ``client``.
    private let defaultClient: HTTPClient
    package let upstreamURL: String
    package let trustDirectory: String
    private let tasks: [Task<Void, any Error>]

    /// - Parameters:
    ///   - upstreamURL: use this instead of a fresh reference upstream (a faulty one).
    ///   - gatewayLogger: the gateway's logger (a ``CapturedLog``'s), instead of none; its span
    ///     exporter's too.
    ///   - tracingEnvironment: the `OTEL_*` variables the span exporter reads, instead of the
    ///     test process's (none by default).
    /// - Parameter tlsClient: the client of ``send(_:_:body:bytes:headers:via:to:)`` when the
    ///   configuration serves TLS (one trusting its certificate's authority).
    package init(
        upstreamURL fixedUpstream: String? = nil, gatewayLogger: Logger? = nil, tracingEnvironment: [String: String] = [:],
        tlsClient: HTTPClient? = nil, configure: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws {
        defaultClient = tlsClient ?? Self.client
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        trustDirectory = try Self.makeTrustStore()
        var tasks: [Task<Void, any Error>] = []
        if let fixedUpstream {
            upstream = nil
            upstreamURL = fixedUpstream
        } else {
            let server = ReferenceUpstreamServer(
                host: "127.0.0.1", port: 0, configuration: Self.upstreamConfiguration, logger: logger, signals: false)
            tasks.append(Task { try await server.run() })
            upstream = server
            upstreamURL = "http://127.0.0.1:\(await server.port.value())"
        }
        var configuration = GatewayConfiguration()
        configuration.port = 0
        configuration.upstreams = [upstreamURL]
        configuration.trustStore = trustDirectory
        configuration.workers = 2
        // The upstream timeouts are waits here (tests about them set their own in `configure`).
        configuration.readTimeout *= TestTiming.scale
        configuration.totalTimeout *= TestTiming.scale
        // Every request of a test comes from 127.0.0.1, dozens a second: the tests of the
        // throttle set their own.
        configuration.throttleExchanges = nil
        configure(&configuration)
        // Tracing as `serve` sets it up: off unless `configure` names an endpoint.
        let tracing = try OTLPTracing.backend(for: configuration, logger: gatewayLogger ?? logger, environment: tracingEnvironment)
        let gateway = try GatewayServer(configuration: configuration, logger: gatewayLogger ?? logger, signals: false, tracing: tracing)
        tasks.append(Task { try await gateway.run() })
        self.gateway = gateway
        gatewayURL = "\(configuration.tlsCertificate == nil ? "http" : "https")://127.0.0.1:\(await gateway.port.value())"
        probesURL = configuration.plainPort == nil ? nil : "http://127.0.0.1:\(await gateway.plainPort.value())"
        self.tasks = tasks
    }

    package func stop() async {
        await gateway.stop()
        await upstream?.stop()
        for task in tasks { _ = try? await task.value }
        try? FileManager.default.removeItem(atPath: trustDirectory)
    }

    /// The standard reference configuration with the harness's platform-mapping id, and the
    /// harness's bearer token accepted without registration.
    package static let upstreamConfiguration: ReferenceConfiguration = {
        var configuration = ReferenceConfiguration.standard
        configuration.mvpds[0].platformMappingId = platformMappingID
        configuration.staticAccessTokens = ["token-1"]
        return configuration
    }()

    /// `<tmp>/Cablevision/cert.pem` + `platform-mapping-id`.
    package static func makeTrustStore() throws -> String {
        let root = TestScratch.directory("samlgate-trust")
        let dir = root.appendingPathComponent(mvpd)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try idpPair.certificatePEM.write(to: dir.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        try platformMappingID.write(to: dir.appendingPathComponent("platform-mapping-id"), atomically: true, encoding: .utf8)
        return root.path
    }

    // MARK: responses

    package static func issue(_ configure: (inout IssueOptions) -> Void = { _ in }) -> [UInt8] {
        var options = IssueOptions(mvpd: mvpd, user: "alice@example.com", attributes: [SAMLAttribute("zip", "10001")])
        configure(&options)
        return try! idp.issue(options)
    }

    /// What the cookbook makes of `xml` (the encoder is checked against the cookbook's own code
    /// in SAMLEncodingTests).
    package static func cookbook(_ xml: [UInt8]) -> String {
        var buffer = ByteBuffer()
        try! xml.withUnsafeBytes { try CookbookEncoder.encode($0, into: &buffer) }
        return String(buffer: buffer)
    }

    package static func base64(_ xml: [UInt8]) -> String { Data(xml).base64EncodedString() }

    // MARK: requests

    package struct Reply {
        package var status: Int
        package var headers: HTTPHeaders
        package var raw: [UInt8]
        /// The HTTP version the answer came in (HTTP/2 when ALPN chose it).
        package var version: HTTPVersion = .http1_1
        package var body: String { String(decoding: raw, as: UTF8.self) }

        /// The `code` of an error body.
        package var code: String? {
            guard let data = body.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return object["code"] as? String
        }

        package var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        }

        /// samlgate's reason of a refusal: the first part of its `details`.
        package var reason: String? { Self.reason(details: json?["details"] as? String) }

        /// `signature_invalid` of `signature_invalid; parameter=SAMLResponse`.
        package static func reason(details: String?) -> String? {
            details.map { String($0.prefix(while: { $0 != ";" })) }
        }

        /// The value of `key=` in a refusal's `details` (`parameter`, `header`, `limit`).
        package func detail(_ key: String) -> String? {
            guard let details = json?["details"] as? String else { return nil }
            for part in details.split(separator: ";").dropFirst() {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0] == key { return String(pair[1]) }
            }
            return nil
        }
    }

    /// Form-encodes `fields` (every byte but unreserved ones escaped, space as `%20`).
    package static func form(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    package static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    package static func v1Fields(_ saml: String, mvpd: String = mvpd, device: String = "device-1") -> [(String, String)] {
        [("requestor", "REF"), ("deviceId", device), ("mvpd", mvpd), ("deviceType", "iOS"), ("SAMLResponse", saml)]
    }

    package func send(
        _ method: HTTPMethod = .POST, _ path: String, body: String? = nil, bytes: [UInt8]? = nil,
        headers: [(String, String)] = [("Content-Type", "application/x-www-form-urlencoded")], via client: HTTPClient? = nil,
        to base: String? = nil
    ) async throws -> Reply {
        let client = client ?? defaultClient
        var request = HTTPClientRequest(url: (base ?? gatewayURL) + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, raw: Array(buffer: data), version: response.version)
    }

    package func exchangeV1(_ saml: String, mvpd: String = mvpd, device: String = "device-1") async throws -> Reply {
        try await send(.POST, "/api/v1/tokens/authn", body: Self.form(Self.v1Fields(saml, mvpd: mvpd, device: device)))
    }

    /// The value of the metric line starting with `prefix` (labels included) in `/metrics`, or 0
    /// (scraped on the probe listener when there is one: the TLS listener needs a client of the tests' authority).
    package func metric(_ prefix: String) async throws -> Double {
        let body = try await send(.GET, "/metrics", to: probesURL).body
        guard let line = body.split(separator: "\n").first(where: { $0.hasPrefix(prefix + " ") }) else { return 0 }
        return Double(line.split(separator: " ").last ?? "") ?? 0
    }

    /// The `AP-Partner-Framework-Status` header value.
    package static func partnerStatus(
        access: String = "granted", provider: String? = platformMappingID, expires: Date = Date().addingTimeInterval(3600),
        permissionError: Bool = false, providerError: Bool = false
    ) -> String {
        var permission: [String: Any] = ["accessStatus": access]
        if permissionError { permission["error"] = ["code": 1, "message": "framework failure"] }
        // A string of milliseconds, as the backend documents it (the contract tests send numbers too).
        var providerInfo: [String: Any] = ["expirationDate": String(Int64(expires.timeIntervalSince1970 * 1000))]
        if let provider { providerInfo["id"] = provider }
        if providerError { providerInfo["error"] = ["code": "2", "message": "provider failure"] }
        let json = try! JSONSerialization.data(withJSONObject: ["frameworkPermissionInfo": permission, "frameworkProviderInfo": providerInfo])
        return json.base64EncodedString()
    }

    package func exchangeV2(_ saml: String, status: String? = partnerStatus(), extraHeaders: [(String, String)] = []) async throws -> Reply {
        var headers = [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Bearer token-1"),
            ("AP-Device-Identifier", "fingerprint device-2"), ("X-Device-Info", "eyJwcmltYXJ5SGFyZHdhcmVUeXBlIjoiU2V0VG9wQm94In0="),
        ]
        if let status { headers.append(("AP-Partner-Framework-Status", status)) }
        headers.append(contentsOf: extraHeaders)
        return try await send(.POST, "/api/v2/REF/profiles/sso/apple", body: Self.form([("SAMLResponse", saml)]), headers: headers)
    }
}

extension GatewayHarness {
    /// Base64 then the cookbook's percent-encoding, without normalization.
    package static func escapeFree(base64Percent xml: [UInt8]) -> String {
        base64(xml).replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")
            .replacingOccurrences(of: "=", with: "%3D")
    }
}

// MARK: - Scoped use

/// Runs `body` with a fresh harness and always stops it.
package func withHarness(
    upstreamURL: String? = nil, gatewayLogger: Logger? = nil, tracingEnvironment: [String: String] = [:], tlsClient: HTTPClient? = nil,
    configure: (inout GatewayConfiguration) -> Void = { _ in }, _ body: (GatewayHarness) async throws -> Void
) async throws {
    let harness = try await GatewayHarness(
        upstreamURL: upstreamURL, gatewayLogger: gatewayLogger, tracingEnvironment: tracingEnvironment, tlsClient: tlsClient,
        configure: configure)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}

// MARK: - The reference upstream directly

extension GatewayHarness {
    /// Sends to the reference upstream itself, with no gateway in between: what the backend
    /// answers a client that talks to it directly.
    package func sendUpstream(
        _ method: HTTPMethod = .POST, _ path: String, body: String? = nil,
        headers: [(String, String)] = [("Content-Type", "application/x-www-form-urlencoded")]
    ) async throws -> Reply {
        try await Self.request(method, upstreamURL + path, body: body, headers: headers)
    }

    /// One request to `url` with the harness's client, the whole answer collected.
    package static func request(_ method: HTTPMethod, _ url: String, body: String?, headers: [(String, String)]) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, raw: Array(buffer: data))
    }
}

// MARK: - The v2 exchange's body

/// The shape of the v2 exchange's success body, as the backend documents it: checked alike on the
/// reference upstream's answers and on the gateway's.
package enum AppleProfileShape {
    /// The documented 201 body of the v2 exchange: `profiles` with one `appleSSO` profile for `mvpd`.
    package static func expect(_ reply: GatewayHarness.Reply, mvpd: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let profiles = reply.json?["profiles"] as? [String: Any]
        #expect(profiles?.count == 1, "\(reply.body)", sourceLocation: sourceLocation)
        let profile = profiles?[mvpd] as? [String: Any] ?? [:]
        for key in ["notBefore", "notAfter"] {
            // A JSON number of digits (not a string, not a fraction), as in the documented sample.
            let number = try? Regex("\"\(key)\"\\s*:\\s*[0-9]+\\s*[,}]")
            #expect(number.map { reply.body.contains($0) } == true, "\(key) is an integer number: \(reply.body)", sourceLocation: sourceLocation)
        }
        let now = Date().timeIntervalSince1970 * 1000
        let notBefore = (profile["notBefore"] as? NSNumber)?.doubleValue ?? 0, notAfter = (profile["notAfter"] as? NSNumber)?.doubleValue ?? 0
        #expect(notBefore <= now + 1000 && notBefore > now - 60_000 && notAfter > now, "milliseconds since the epoch", sourceLocation: sourceLocation)
        #expect(profile["issuer"] as? String == "Apple", sourceLocation: sourceLocation)
        #expect(profile["type"] as? String == "appleSSO", sourceLocation: sourceLocation)
        let attributes = profile["attributes"] as? [String: [String: Any]] ?? [:]
        #expect(attributes["userID"] != nil, "the mandatory userID", sourceLocation: sourceLocation)
        for (name, attribute) in attributes {
            #expect(attribute["value"] is String && attribute["state"] is String, "\(name): {value, state}", sourceLocation: sourceLocation)
        }
    }
}
