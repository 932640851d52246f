import Foundation
import GatewayTestSupport
import ServerSupport
import Testing

/// The gateway answers as the backend does: every documented refusal both can produce is sent,
/// byte for byte the same, to the reference upstream directly and through the gateway, and the
/// two answers must agree on the HTTP status and `code`, each in the backend's enhanced error
/// shape (documented field order and types, `trace` the request id). Where only the gateway
/// refuses (a forged, replayed or malformed response) its answer is the backend's
/// `400 invalid_parameter_saml_response` with samlgate's reason in `details`.
@Suite("Backend contract: the gateway and the reference upstream answer alike")
struct BackendContractTests {
    static let form = ("Content-Type", "application/x-www-form-urlencoded")
    static let v2Path = "/api/v2/\(ContractHarness.serviceProvider)/profiles/sso/Apple"

    static func saml() -> String { GatewayHarness.base64(GatewayHarness.issue()) }

    /// A v2 exchange both would accept: the documentation's sample headers and a fresh response.
    static func v2(_ name: String, saml: String = saml()) -> ContractRequest {
        ContractRequest(
            name, path: v2Path,
            headers: [
                form, ("Authorization", "Bearer \(ContractHarness.token)"), ("AP-Device-Identifier", ContractHarness.sampleDeviceIdentifier),
                ("X-Device-Info", ContractHarness.sampleDeviceInfo), ("AP-Partner-Framework-Status", ContractHarness.samplePartnerStatus),
            ],
            body: GatewayHarness.form([("SAMLResponse", saml)]))
    }

    /// A v1 exchange both would accept, with `changes` applied to its fields and the fields
    /// `without` left out.
    static func v1(_ name: String, _ changes: [String: String] = [:], without: [String] = [], saml: String = saml()) -> ContractRequest {
        let fields = GatewayHarness.v1Fields(saml, mvpd: ContractHarness.mvpd, device: "contract-device")
            .filter { !without.contains($0.0) }.map { ($0.0, changes[$0.0] ?? $0.1) }
        return ContractRequest(name, path: "/api/v1/tokens/authn", headers: [form], body: GatewayHarness.form(fields))
    }

    /// `AP-Partner-Framework-Status` for the contract's provider.
    static func status(
        _ access: String = "granted", provider: String? = ContractHarness.providerID, expires: Date = Date().addingTimeInterval(3600),
        permissionError: Bool = false, providerError: Bool = false
    ) -> String {
        GatewayHarness.partnerStatus(
            access: access, provider: provider, expires: expires, permissionError: permissionError, providerError: providerError)
    }

    /// A status written out as JSON text (a number `expirationDate`, shapes the helper does not build).
    static func status(json: String) -> String { Data(json.utf8).base64EncodedString() }

    /// Sends `request` to both, checks each answer's shape and that they agree on the status and
    /// code, and that these are the `status` and `code` the documentation gives for the case.
    static func expectAlike(
        _ contract: ContractHarness, _ request: ContractRequest, _ status: Int, _ code: BackendErrorCode, format: ErrorFormat = .json,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let trace = "contract-\(UUID().uuidString)"
        let direct = try await contract.direct(request, trace: trace)
        let gateway = try await contract.throughGateway(request)
        let directCode = EnhancedErrorShape.check(direct, format, trace: trace, "\(request.name) (reference)", sourceLocation: sourceLocation)
        let gatewayCode = EnhancedErrorShape.check(
            gateway, format, trace: gateway.headers.first(name: "X-Request-Id"), "\(request.name) (gateway)", sourceLocation: sourceLocation)
        #expect(
            direct.status == gateway.status && directCode == gatewayCode,
            "\(request.name): reference \(direct.status) \(directCode?.rawValue ?? "-"), gateway \(gateway.status) \(gatewayCode?.rawValue ?? "-")",
            sourceLocation: sourceLocation)
        #expect(
            direct.status == status && directCode == code, "\(request.name): documented \(status) \(code.rawValue)", sourceLocation: sourceLocation)
        report(request.name, direct, directCode, gateway, gatewayCode, format)
    }

    /// With `SAMLGATE_CONTRACT_TABLE` set, one line per case: what each side answered.
    static func report(
        _ name: String, _ direct: GatewayHarness.Reply, _ directCode: BackendErrorCode?, _ gateway: GatewayHarness.Reply,
        _ gatewayCode: BackendErrorCode?, _ format: ErrorFormat
    ) {
        guard ProcessInfo.processInfo.environment["SAMLGATE_CONTRACT_TABLE"] != nil else { return }
        func details(_ reply: GatewayHarness.Reply) -> String {
            EnhancedErrorShape.fields(reply, format)?.first { $0.0 == "details" }.map { " (\($0.1))" } ?? ""
        }
        print(
            "| \(name) | \(direct.status) \(directCode?.rawValue ?? "-")\(details(direct)) | \(gateway.status) \(gatewayCode?.rawValue ?? "-")\(details(gateway)) |"
        )
    }

    // MARK: v2 exchange

    @Test("v2 exchange, the caller: access token, service provider, device identifier, partner")
    func v2Caller() async throws {
        try await ContractHarness.with { c in
            let cases: [(ContractRequest, Int, BackendErrorCode)] = [
                (Self.v2("no Authorization").without("Authorization"), 401, .invalidAccessTokenClientApplication),
                (Self.v2("Basic credentials").with("Authorization", "Basic dXNlcjpwdw=="), 401, .invalidAccessTokenClientApplication),
                (Self.v2("an unknown bearer token").with("Authorization", "Bearer forged"), 401, .invalidAccessTokenClientApplication),
                (
                    {
                        var r = Self.v2("an unknown service provider")
                        r.path = "/api/v2/NOPE/profiles/sso/Apple"
                        return r
                    }(), 400,
                    .invalidParameterServiceProvider
                ),
                (Self.v2("no AP-Device-Identifier").without("AP-Device-Identifier"), 400, .invalidHeaderDeviceIdentifier),
                (Self.v2("AP-Device-Identifier of another type").with("AP-Device-Identifier", "idfa ZGV2aWNl"), 400, .invalidHeaderDeviceIdentifier),
                (
                    Self.v2("AP-Device-Identifier not base64").with("AP-Device-Identifier", "fingerprint dev ice!"), 400,
                    .invalidHeaderDeviceIdentifier
                ),
                (
                    {
                        var r = Self.v2("partner Google")
                        r.path = "/api/v2/REF/profiles/sso/Google"
                        return r
                    }(), 400, .invalidParameterPartner
                ),
            ]
            for (request, status, code) in cases { try await Self.expectAlike(c, request, status, code) }
        }
    }

    @Test("v2 exchange, the partner status: absent, unreadable, each refusing state, unknown provider, expired")
    func v2PartnerStatus() async throws {
        try await ContractHarness.with { c in
            let past = Date().addingTimeInterval(-3600)
            let pastMillis = Int64(past.timeIntervalSince1970 * 1000)
            let pfs = "AP-Partner-Framework-Status"
            let cases: [(ContractRequest, BackendErrorCode)] = [
                (Self.v2("status absent").without(pfs), .invalidHeaderPFSPermissionAccessNotPresent),
                (Self.v2("status not base64").with(pfs, "not base64!"), .invalidHeaderPFSPermissionAccessNotPresent),
                (Self.v2("status not a JSON object").with(pfs, Self.status(json: "[1]")), .invalidHeaderPFSPermissionAccessNotPresent),
                (Self.v2("status without frameworkPermissionInfo").with(pfs, Self.status(json: "{}")), .invalidHeaderPFSPermissionAccessNotPresent),
                (Self.v2("unknown accessStatus").with(pfs, Self.status("maybe")), .invalidHeaderPFSPermissionAccessNotPresent),
                (Self.v2("accessStatus denied").with(pfs, Self.status("denied")), .invalidHeaderPFSPermissionAccessNotGranted),
                (Self.v2("accessStatus restricted").with(pfs, Self.status("restricted")), .invalidHeaderPFSPermissionAccessNotGranted),
                (Self.v2("accessStatus notDetermined").with(pfs, Self.status("notDetermined")), .invalidHeaderPFSPermissionAccessNotDetermined),
                (Self.v2("accessStatus pending (older spelling)").with(pfs, Self.status("pending")), .invalidHeaderPFSPermissionAccessNotDetermined),
                (Self.v2("permission error").with(pfs, Self.status(permissionError: true)), .invalidHeaderPFSPermissionAccessNotDetermined),
                (Self.v2("provider error").with(pfs, Self.status(providerError: true)), .invalidHeaderPFSProviderIDNotDetermined),
                (Self.v2("no provider id").with(pfs, Self.status(provider: nil)), .invalidHeaderPFSProviderIDNotDetermined),
                (
                    Self.v2("no frameworkProviderInfo").with(pfs, Self.status(json: #"{"frameworkPermissionInfo":{"accessStatus":"granted"}}"#)),
                    .invalidHeaderPFSProviderIDNotDetermined
                ),
                (Self.v2("provider id unknown to both").with(pfs, Self.status(provider: "Nowhere")), .invalidHeaderPFSProviderIDNotDetermined),
                (Self.v2("expired, string expirationDate").with(pfs, Self.status(expires: past)), .invalidHeaderPFSProviderInfoExpired),
                (
                    Self.v2("expired, number expirationDate").with(
                        pfs,
                        Self.status(
                            json:
                                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Cablevision","expirationDate":\#(pastMillis)}}"#
                        )), .invalidHeaderPFSProviderInfoExpired
                ),
            ]
            for (request, code) in cases { try await Self.expectAlike(c, request, 400, code) }
            #expect(c.upstream.store.exchanges.isEmpty, "no refused exchange was recorded")
        }
    }

    @Test("v2 exchange, SAMLResponse: missing, empty, not base64, still percent-encoded, a broken escape")
    func v2SAMLResponse() async throws {
        try await ContractHarness.with { c in
            let stillEncoded = GatewayHarness.escapeFree(base64Percent: Array("<unsigned/>".utf8))
            let cases: [ContractRequest] = [
                {
                    var r = Self.v2("SAMLResponse missing")
                    r.body = ""
                    return r
                }(),
                {
                    var r = Self.v2("SAMLResponse empty")
                    r.body = "SAMLResponse="
                    return r
                }(),
                Self.v2("SAMLResponse not base64", saml: "not base64!!"),
                // Percent-encoded once more than the form's own encoding (and not a signed response).
                Self.v2("SAMLResponse still percent-encoded", saml: stillEncoded),
                {
                    var r = Self.v2("a broken % escape")
                    r.body = "SAMLResponse=%zz"
                    return r
                }(),
            ]
            for request in cases { try await Self.expectAlike(c, request, 400, .invalidParameterSAMLResponse) }
        }
    }

    // MARK: v1 exchange

    @Test("v1 exchange: each missing field, deviceType, unknown requestor, MVPD unknown or without platform SSO, SAMLResponse")
    func v1Exchange() async throws {
        try await ContractHarness.with { c in
            let cases: [(ContractRequest, BackendErrorCode)] = [
                (Self.v1("requestor missing", without: ["requestor"]), .invalidRequestor),
                (Self.v1("deviceId missing", without: ["deviceId"]), .invalidDeviceID),
                (Self.v1("mvpd missing", without: ["mvpd"]), .invalidParameterMVPD),
                (Self.v1("deviceType missing", without: ["deviceType"]), .invalidDeviceInfo),
                (Self.v1("SAMLResponse missing", without: ["SAMLResponse"]), .invalidParameterSAMLResponse),
                (Self.v1("requestor empty", ["requestor": ""]), .invalidRequestor),
                (Self.v1("deviceType Android", ["deviceType": "Android"]), .invalidDeviceInfo),
                (Self.v1("unknown requestor", ["requestor": "NOPE"]), .invalidRequestor),
                (Self.v1("mvpd unknown", ["mvpd": "Nowhere"]), .unknownIntegration),
                (Self.v1("mvpd without platform SSO", ["mvpd": "SecondScreenTV"]), .unknownIntegration),
                (Self.v1("SAMLResponse not base64", saml: "not base64!!"), .invalidParameterSAMLResponse),
            ]
            for (request, code) in cases { try await Self.expectAlike(c, request, 400, code) }
        }
    }

    @Test("v1 exchange with Accept: application/xml: the <error> element on both")
    func v1XML() async throws {
        try await ContractHarness.with { c in
            let cases: [(ContractRequest, BackendErrorCode)] = [
                (Self.v1("XML: deviceId missing", without: ["deviceId"]), .invalidDeviceID),
                (Self.v1("XML: deviceType Android", ["deviceType": "Android"]), .invalidDeviceInfo),
                (Self.v1("XML: unknown requestor", ["requestor": "NOPE"]), .invalidRequestor),
                (Self.v1("XML: mvpd unknown", ["mvpd": "Nowhere"]), .unknownIntegration),
                (Self.v1("XML: SAMLResponse not base64", saml: "not base64!!"), .invalidParameterSAMLResponse),
            ]
            for (request, code) in cases {
                try await Self.expectAlike(c, request.with("Accept", "application/xml"), 400, code, format: .xml)
            }
            // JSON first in the list, or any type: JSON.
            try await Self.expectAlike(
                c, Self.v1("Accept JSON then XML", without: ["deviceId"]).with("Accept", "application/json, application/xml"), 400,
                .invalidDeviceID)
        }
    }

    // MARK: accepted by both

    @Test("the documentation's sample headers, no X-Device-Info, a number expirationDate: 201 with the profiles map on both")
    func accepted() async throws {
        try await ContractHarness.with { c in
            let future = Int64(Date().addingTimeInterval(3600).timeIntervalSince1970 * 1000)
            let requests = [
                Self.v2("the documented sample headers"),
                Self.v2("no X-Device-Info").without("X-Device-Info"),
                Self.v2("X-Device-Info not base64").with("X-Device-Info", "not base64!"),
                Self.v2("a number expirationDate").with(
                    "AP-Partner-Framework-Status",
                    Self.status(
                        json:
                            #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"Cablevision","expirationDate":\#(future)}}"#
                    )),
                {
                    var request = Self.v2("partner and bearer in lower case").with("Authorization", "bearer \(ContractHarness.token)")
                    request.path = "/api/v2/\(ContractHarness.serviceProvider)/profiles/sso/apple"
                    return request
                }(),
            ]
            for template in requests {
                // A fresh response for each side: the gateway refuses one it has seen.
                for side in ["reference", "gateway"] {
                    var request = template
                    request.body = GatewayHarness.form([("SAMLResponse", Self.saml())])
                    let reply = side == "reference" ? try await c.direct(request, trace: "contract-accepted") : try await c.throughGateway(request)
                    #expect(reply.status == 201, "\(template.name) (\(side)): \(reply.body)")
                    AppleProfileShape.expect(reply, mvpd: ContractHarness.mvpd)
                }
            }
            for side in ["reference", "gateway"] {
                let request = Self.v1("a v1 exchange")
                let reply = side == "reference" ? try await c.direct(request, trace: "contract-v1") : try await c.throughGateway(request)
                #expect(reply.status == 204 && reply.raw.isEmpty, "v1 (\(side)): \(reply.status) \(reply.body)")
            }
        }
    }

    // MARK: refused by the gateway only

    /// The gateway's own refusal: the backend's code for a bad `SAMLResponse`, samlgate's reason in `details`.
    static func expectGatewayRefusal(
        _ reply: GatewayHarness.Reply, reason: String?, _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let code = EnhancedErrorShape.check(
            reply, trace: reply.headers.first(name: "X-Request-Id"), "\(label) (gateway)", sourceLocation: sourceLocation)
        #expect(reply.status == 400 && code == .invalidParameterSAMLResponse, "\(label): \(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.json?["details"] is String, "\(label): the reason in details", sourceLocation: sourceLocation)
        if let reason { #expect(reply.reason == reason, "\(label): \(reply.body)", sourceLocation: sourceLocation) }
    }

    @Test("forged, replayed and malformed responses: the reference takes them, the gateway answers 400 invalid_parameter_saml_response")
    func gatewayOnly() async throws {
        try await ContractHarness.with { c in
            let forged = GatewayHarness.base64(try GatewayHarness.attackerIdP.issue(.init(mvpd: ContractHarness.mvpd, user: "mallory@example.com")))
            let malformed = GatewayHarness.base64(Array(#"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x">"#.utf8))
            for (name, saml, reason) in [("forged", forged, "key_not_trusted"), ("malformed", malformed, nil)] {
                for request in [Self.v2("v2 \(name)", saml: saml), Self.v1("v1 \(name)", saml: saml)] {
                    let direct = try await c.direct(request, trace: "contract-\(name)")
                    #expect([201, 204].contains(direct.status), "the reference does not verify: \(direct.status) \(direct.body)")
                    Self.expectGatewayRefusal(try await c.throughGateway(request), reason: reason, request.name)
                }
            }
            let replayed = Self.v2("v2 replayed")
            for _ in 0..<2 {
                #expect(try await c.direct(replayed, trace: "contract-replay").status == 201, "the reference keeps no replay cache")
            }
            #expect(try await c.throughGateway(replayed).status == 201)
            Self.expectGatewayRefusal(try await c.throughGateway(replayed), reason: "replayed", replayed.name)
        }
    }

    @Test("a signed response still percent-encoded, or raw XML: the reference refuses it, the gateway repairs the encoding")
    func gatewayRepairs() async throws {
        try await ContractHarness.with { c in
            // Deliberate: the gateway takes the response in whatever form the app sends and
            // forwards it encoded once, as the cookbook prescribes.
            let forms: [(String, ([UInt8]) -> String, String)] = [
                ("still percent-encoded", { GatewayHarness.escapeFree(base64Percent: $0) }, "double_encoded"),
                ("raw XML", { String(decoding: $0, as: UTF8.self) }, "malformed_base64"),
            ]
            for (name, encode, reason) in forms {
                for (request, success) in [
                    (Self.v2("v2 \(name), signed", saml: encode(GatewayHarness.issue())), 201),
                    (Self.v1("v1 \(name), signed", saml: encode(GatewayHarness.issue())), 204),
                ] {
                    let direct = try await c.direct(request, trace: "contract-repair")
                    EnhancedErrorShape.check(direct, trace: "contract-repair", "\(request.name) (reference)")
                    #expect(direct.status == 400 && direct.code == BackendErrorCode.invalidParameterSAMLResponse.rawValue, "\(request.name)")
                    #expect(direct.json?["details"] as? String == reason, "\(request.name): \(direct.body)")
                    let gateway = try await c.throughGateway(request)
                    #expect(gateway.status == success, "\(request.name): \(gateway.body)")
                    if success == 201 { AppleProfileShape.expect(gateway, mvpd: ContractHarness.mvpd) }
                }
            }
        }
    }

    // MARK: known differences

    /// Where the two answers differ, and why — each side's answer asserted, so a change on either
    /// side shows here. The gateway knows no service providers, requestors or access tokens, and
    /// its trust store lists the MVPDs boarded for partner SSO only; so with two faults it answers
    /// the first one it can see, where the backend answers the first in its own order, and an MVPD
    /// the backend knows without partner SSO is, to the gateway, a provider it cannot place. Both
    /// answers are published codes of the same API, with the documented shape.
    @Test("known differences: a fault only the backend can see before one the gateway sees; an MVPD without partner SSO")
    func knownDifferences() async throws {
        try await ContractHarness.with { c in
            let pfs = "AP-Partner-Framework-Status"
            func unknownServiceProvider(_ request: ContractRequest) -> ContractRequest {
                var copy = request
                copy.path = "/api/v2/NOPE/profiles/sso/Apple"
                return copy
            }
            typealias Answer = (status: Int, code: BackendErrorCode)
            let cases: [(ContractRequest, reference: Answer, gateway: Answer)] = [
                (
                    unknownServiceProvider(Self.v2("unknown service provider + malformed device identifier").with("AP-Device-Identifier", "idfa x")),
                    (400, .invalidParameterServiceProvider), (400, .invalidHeaderDeviceIdentifier)
                ),
                (
                    unknownServiceProvider(Self.v2("unknown service provider + status denied").with(pfs, Self.status("denied"))),
                    (400, .invalidParameterServiceProvider), (400, .invalidHeaderPFSPermissionAccessNotGranted)
                ),
                (
                    Self.v2("unknown bearer token + status denied").with("Authorization", "Bearer forged").with(pfs, Self.status("denied")),
                    (401, .invalidAccessTokenClientApplication), (400, .invalidHeaderPFSPermissionAccessNotGranted)
                ),
                (
                    Self.v2("unknown bearer token + SAMLResponse not base64", saml: "not base64!!").with("Authorization", "Bearer forged"),
                    (401, .invalidAccessTokenClientApplication), (400, .invalidParameterSAMLResponse)
                ),
                (
                    Self.v1("unknown requestor + deviceType Android", ["requestor": "NOPE", "deviceType": "Android"]),
                    (400, .invalidRequestor), (400, .invalidDeviceInfo)
                ),
                (
                    Self.v1("unknown requestor + mvpd unknown", ["requestor": "NOPE", "mvpd": "Nowhere"]),
                    (400, .invalidRequestor), (400, .unknownIntegration)
                ),
                (
                    Self.v2("provider without platform services").with(pfs, Self.status(provider: "SecondScreenTV")),
                    (400, .invalidIntegration), (400, .invalidHeaderPFSProviderIDNotDetermined)
                ),
                (
                    Self.v2("provider in the picker only").with(pfs, Self.status(provider: "PickerCable")),
                    (400, .invalidIntegration), (400, .invalidHeaderPFSProviderIDNotDetermined)
                ),
            ]
            for (request, reference, gateway) in cases {
                let trace = "contract-\(UUID().uuidString)"
                let direct = try await c.direct(request, trace: trace)
                let through = try await c.throughGateway(request)
                let directCode = EnhancedErrorShape.check(direct, .json, trace: trace, "\(request.name) (reference)")
                let gatewayCode = EnhancedErrorShape.check(
                    through, .json, trace: through.headers.first(name: "X-Request-Id"), "\(request.name) (gateway)")
                #expect(direct.status == reference.status && directCode == reference.code, "\(request.name): reference \(direct.body)")
                #expect(through.status == gateway.status && gatewayCode == gateway.code, "\(request.name): gateway \(through.body)")
                Self.report(request.name, direct, directCode, through, gatewayCode, .json)
            }
        }
    }
}
