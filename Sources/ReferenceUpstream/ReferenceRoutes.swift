// The reference upstream's server and what its routes share: the router, reading a request's
// form, query and headers, the common refusals, and the inspection routes of tests and demos.

import Foundation
import Hummingbird
import Logging
import NIOCore
import SAMLEncoding
import ServerSupport
import ServiceLifecycle

/// `samlgate upstream`: an in-memory stand-in for the authentication backend (Adobe Pass REST
/// API v1 and v2), complete for the Apple SSO cookbook flows, so the gateway can be run, tested
/// and demonstrated on one machine. The routes are listed in docs/reference-upstream.md
/// and docs/openapi.yaml; what it knows (requestors, MVPDs, lifetimes) comes from
/// ``ReferenceConfiguration``.
package final class ReferenceUpstreamServer: Sendable {
    package let store: ReferenceStore
    package let configuration: ReferenceConfiguration
    package let port = ListeningPort()
    private let group: ServiceGroup

    /// - Parameter exchangeLog: how many token exchanges `/reference/exchanges` keeps.
    package init(
        host: String, port listenPort: Int, configuration: ReferenceConfiguration = .standard,
        exchangeLog: Int = ReferenceStore.defaultExchangeLimit, logger: Logger, signals: Bool
    ) {
        self.configuration = configuration
        let store = ReferenceStore(exchangeLimit: exchangeLog)
        self.store = store
        let router = Router()
        ReferenceRoutes(configuration: configuration, store: store).add(to: router)
        let port = self.port
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: listenPort), serverName: "samlgate-reference-upstream"),
            onServerRunning: { channel in port.publish(channel.localAddress?.port ?? 0) },
            logger: logger)
        group = ServiceGroup(
            configuration: .init(
                services: [.init(service: app)], gracefulShutdownSignals: signals ? [.sigterm, .sigint] : [], logger: logger))
    }

    package func run() async throws {
        try await group.run()
    }

    package func stop() async {
        await group.triggerGracefulShutdown()
    }
}

// MARK: - Routes

/// The reference upstream's handlers (see ``ReferenceUpstreamServer``), one file per part of
/// the API: token exchanges, the v1 flow, second-screen logins, the v2 flow, inspection.
struct ReferenceRoutes: Sendable {
    let configuration: ReferenceConfiguration
    let store: ReferenceStore
    static let bodyLimit = 4 << 20

    func add(to router: Router<BasicRequestContext>) {
        router.add(middleware: RefusalMiddleware())
        addExchanges(to: router)
        addV1(to: router)
        addSecondScreen(to: router)
        addV2(to: router)
        addInspection(to: router)
    }

    // MARK: reading requests

    /// A form body, each value decoded once; `nil` when a `%` escape is broken.
    func form(_ request: Request) async throws -> [String: (raw: String, decoded: [UInt8])]? {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        return body.withUnsafeReadableBytes { ReferenceForm.parse($0.bindMemory(to: UInt8.self)) }
    }

    /// A non-empty query parameter (percent-decoded).
    func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[Substring(name)].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
    }

    func header(_ request: Request, _ name: String) -> String? {
        request.headers[Field.Name(name)!].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The request id the gateway added, for `trace`.
    func trace(_ request: Request) -> String? { header(request, "X-Request-Id") }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A required parameter missing: the backend's code for it on the request's API.
    func missing(_ name: String, _ request: Request) -> Response {
        let api = BackendAPI(path: request.uri.path)
        return ReferenceReply.error(
            400, BackendErrorCode.forParameter(name, api: api) ?? .generic(api: api), "the required parameter \(name) is missing",
            for: request)
    }

    /// A form value decoded once, `nil` when absent or empty.
    func value(_ fields: [String: (raw: String, decoded: [UInt8])], _ name: String) -> String? {
        fields[name].map { text($0.decoded) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    func brokenForm(_ request: Request) -> Response {
        ReferenceReply.error(
            400, .invalidParameterSAMLResponse, "the form body has a broken % escape", for: request, details: "malformed_percent_encoding")
    }

    /// v1's `unknown_integration`, v2's `invalid_integration`.
    func notIntegrated(_ request: Request) -> Response {
        ReferenceReply.error(
            400, BackendAPI(path: request.uri.path) == .v1 ? .unknownIntegration : .invalidIntegration,
            "the MVPD is not integrated with this requestor for platform SSO", for: request)
    }

    func unknownRequestor(_ request: Request) -> Response {
        ReferenceReply.error(400, .invalidRequestor, "the requestor is not configured", for: request)
    }

    /// The MVPD's configuration entry as the configuration endpoints list it.
    func describe(_ mvpd: ReferenceMVPD) -> [String: Any] {
        [
            "id": mvpd.id, "displayName": mvpd.displayName, "logoUrl": NSNull(), "isTempPass": false, "isProxy": false,
            "enablePlatformServices": mvpd.enablePlatformServices, "boardingStatus": mvpd.boardingStatus,
            "displayInPlatformPicker": mvpd.displayInPlatformPicker, "platformMappingId": mvpd.platformMappingId,
            "requiredMetadataFields": mvpd.requiredMetadataFields, "enforcePlatformPermissions": mvpd.enablePlatformServices,
        ]
    }

    /// `{"requestor": {"id", "name", "mvpds": [...]}}`, shared by v1 and v2 configuration.
    func configurationBody(_ requestor: ReferenceRequestor) -> [String: Any] {
        let mvpds = requestor.mvpds.compactMap(configuration.mvpd).map(describe)
        return ["requestor": ["id": requestor.id, "name": requestor.id, "mvpds": mvpds] as [String: Any]]
    }

    /// A fresh profile request (`verificationToken` / `authenticationRequest.request`).
    func profileRequest(for mvpd: ReferenceMVPD, requestor: String) -> String {
        AttributeQuery.make(id: "_" + store.nextID("aq"), mvpd: mvpd, requestor: requestor, now: Date())
    }
}

// MARK: - Form bodies

/// A deliberately plain `application/x-www-form-urlencoded` reader, independent of the
/// gateway's, as the backend would have: every value is percent-decoded exactly once.
///
/// Plain but not slow: it runs on every exchange of `make load`, on the cores the gateway is
/// measured on, so it finds pairs in the body's bytes in place (no split into arrays of pairs)
/// and decodes each name and value in one pass into one buffer of its encoded length.
enum ReferenceForm {
    /// Field name → (value as received, value decoded once). `nil` when a `%` escape is broken.
    static func parse(_ body: UnsafeBufferPointer<UInt8>) -> [String: (raw: String, decoded: [UInt8])]? {
        var fields: [String: (raw: String, decoded: [UInt8])] = [:]
        var start = 0
        while start < body.count {
            let end = body[start...].firstIndex(of: UInt8(ascii: "&")) ?? body.count
            defer { start = end + 1 }
            guard end > start else { continue }  // empty pairs (`&&`) are skipped
            let pair = UnsafeBufferPointer(rebasing: body[start..<end])
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
            guard let name = decode(UnsafeBufferPointer(rebasing: pair[..<equals])).flatMap({ String(validating: $0, as: UTF8.self) })
            else { return nil }
            let rawValue = UnsafeBufferPointer(rebasing: pair[min(equals + 1, pair.count)...])
            guard let value = decode(rawValue) else { return nil }
            fields[name] = (String(decoding: rawValue, as: UTF8.self), value)
        }
        return fields
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var broken = false
        let out = [UInt8](unsafeUninitializedCapacity: bytes.count) { out, written in
            var index = 0
            written = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "+") {
                    out[written] = UInt8(ascii: " ")
                    index += 1
                } else if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.count, let high = HexDigits.value(bytes[index + 1]),
                        let low = HexDigits.value(bytes[index + 2])
                    else {
                        broken = true
                        return
                    }
                    out[written] = high << 4 | low
                    index += 3
                } else {
                    out[written] = byte
                    index += 1
                }
                written += 1
            }
        }
        return broken ? nil : out
    }
}

// MARK: - Inspection

/// Routes for people and tests, outside the backend's API: what reached the upstream, and an
/// echo to watch what a proxy forwards.
extension ReferenceRoutes {
    func addInspection(to router: Router<BasicRequestContext>) {
        router.get("/reference/exchanges") { _, _ in exchanges() }
        for method: HTTPRequest.Method in [.get, .post, .put, .delete, .patch, .head, .options] {
            router.on("/reference/echo/**", method: method) { request, _ in try await echo(request) }
        }
    }

    /// `GET /reference/exchanges`: the recorded `SAMLResponse` fields, as received.
    func exchanges() -> Response {
        let items: [[String: Any]] = store.exchanges.map { exchange in
            [
                "route": exchange.route, "requestor": exchange.requestor, "requestId": exchange.requestID.map { $0 as Any } ?? NSNull(),
                "SAMLResponse": exchange.samlResponse,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: items, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return ReferenceReply.body(200, "application/json", Array(data))
    }

    /// `ANY /reference/echo/...`: the request body unchanged, with the method, URI and headers it
    /// saw in `X-Echo-*` headers.
    func echo(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        var headers = HTTPFields()
        headers[Field.Name("X-Echo-Method")!] = request.method.rawValue
        headers[Field.Name("X-Echo-URI")!] = request.uri.string
        var seen = JSONLine()
        for field in request.headers { seen.add(field.name.canonicalName, field.value) }
        headers[Field.Name("X-Echo-Headers")!] = seen.json
        headers[.contentType] = request.headers[.contentType] ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
