import Foundation
import Hummingbird
import NIOCore
import ServerSupport

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
