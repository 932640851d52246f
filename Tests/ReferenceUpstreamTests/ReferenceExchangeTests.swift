import Foundation
import GatewayTestSupport
import ServerSupport
import Testing

/// The reference upstream's two token exchanges, asked directly: each fault answered with the
/// code the backend publishes for it, in the order the backend checks (a request with two faults
/// gets the first one's code), and the success bodies as documented.
@Suite("Reference upstream: token exchanges")
struct ReferenceExchangeTests {
    static let form = ("Content-Type", "application/x-www-form-urlencoded")
    static let token = ("Authorization", "Bearer token-1")
    static let device = ("AP-Device-Identifier", "fingerprint ZGV2aWNlLXJlZg==")

    static func status(_ access: String = "granted", provider: String? = GatewayHarness.platformMappingID) -> (String, String) {
        ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: access, provider: provider))
    }

    static func saml() -> String { GatewayHarness.base64(GatewayHarness.issue()) }

    @Test("v1: missing fields in order, unknown requestor, deviceType, integration, then SAMLResponse")
    func v1Order() async throws {
        try await withHarness { h in
            let saml = Self.saml()
            let fields = GatewayHarness.v1Fields(saml)
            let missingCodes: [(String, BackendErrorCode)] = [
                ("requestor", .invalidRequestor), ("deviceId", .invalidDeviceID), ("mvpd", .invalidParameterMVPD),
                ("deviceType", .invalidDeviceInfo), ("SAMLResponse", .invalidParameterSAMLResponse),
            ]
            for (index, (_, code)) in missingCodes.enumerated() {
                // This field and every later one missing: the first missing one is named.
                let later = Set(missingCodes[index...].map(\.0))
                let reply = try await h.sendUpstream(
                    .POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields.filter { !later.contains($0.0) }))
                ReferenceUpstreamTests.expectRefusal(reply, 400, code)
            }
            func with(_ name: String, _ value: String) -> String {
                GatewayHarness.form(fields.map { $0.0 == name ? (name, value) : $0 })
            }
            // Unknown requestor before a bad deviceType; a bad deviceType before the integration.
            let unknownRequestor = GatewayHarness.form(
                fields.map { $0.0 == "requestor" ? ("requestor", "NOPE") : $0.0 == "deviceType" ? ("deviceType", "Android") : $0 })
            ReferenceUpstreamTests.expectRefusal(
                try await h.sendUpstream(.POST, "/api/v1/tokens/authn", body: unknownRequestor), 400, .invalidRequestor)
            let badType = GatewayHarness.form(
                fields.map { $0.0 == "deviceType" ? ("deviceType", "Android") : $0.0 == "mvpd" ? ("mvpd", "Nowhere") : $0 })
            ReferenceUpstreamTests.expectRefusal(try await h.sendUpstream(.POST, "/api/v1/tokens/authn", body: badType), 400, .invalidDeviceInfo)
            for mvpd in ["Nowhere", "SecondScreenTV", "PickerCable"] {
                let reply = try await h.sendUpstream(.POST, "/api/v1/tokens/authn", body: with("mvpd", mvpd))
                ReferenceUpstreamTests.expectRefusal(reply, 400, .unknownIntegration)
            }
            let badSAML: [(String, String)] = [
                ("not base64!!", "malformed_base64"), (GatewayHarness.escapeFree(base64Percent: GatewayHarness.issue()), "double_encoded"),
                (Data("plain text, no markup".utf8).base64EncodedString(), "unrecognized_saml_form"),
            ]
            for (value, reason) in badSAML {
                let reply = try await h.sendUpstream(.POST, "/api/v1/tokens/authn", body: with("SAMLResponse", value))
                ReferenceUpstreamTests.expectRefusal(reply, 400, .invalidParameterSAMLResponse)
                #expect(reply.json?["details"] as? String == reason, "\(reply.body)")
            }
            let accepted = try await h.sendUpstream(.POST, "/api/v1/tokens/authn", body: GatewayHarness.form(fields))
            #expect(accepted.status == 204 && accepted.raw.isEmpty, "\(accepted.body)")
        }
    }

    @Test("v2: access token, service provider, device identifier, partner, partner status, integration, then SAMLResponse")
    func v2Order() async throws {
        try await withHarness { h in
            let body = GatewayHarness.form([("SAMLResponse", Self.saml())])
            func exchange(
                _ headers: [(String, String)], sp: String = "REF", partner: String = "Apple", body: String = body
            ) async throws -> GatewayHarness.Reply {
                try await h.sendUpstream(.POST, "/api/v2/\(sp)/profiles/sso/\(partner)", body: body, headers: [Self.form] + headers)
            }
            // Each fault together with every later one: the first is answered.
            let badDevice = ("AP-Device-Identifier", "idfa ZGV2aWNl")
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([badDevice, Self.status("denied")], sp: "NOPE", partner: "Google"), 401, .invalidAccessTokenClientApplication)
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([Self.token, badDevice, Self.status("denied")], sp: "NOPE", partner: "Google"), 400,
                .invalidParameterServiceProvider)
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([Self.token, badDevice, Self.status("denied")], partner: "Google"), 400, .invalidHeaderDeviceIdentifier)
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([Self.token, Self.device, Self.status("denied")], partner: "Google"), 400, .invalidParameterPartner)
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([Self.token, Self.device, Self.status("denied", provider: "SecondScreenTV")], body: ""), 400,
                .invalidHeaderPFSPermissionAccessNotGranted)
            for provider in ["SecondScreenTV", "PickerCable"] {
                ReferenceUpstreamTests.expectRefusal(
                    try await exchange([Self.token, Self.device, Self.status(provider: provider)], body: ""), 400, .invalidIntegration)
            }
            ReferenceUpstreamTests.expectRefusal(
                try await exchange([Self.token, Self.device, Self.status()], body: ""), 400, .invalidParameterSAMLResponse)
            // The partner in any case; X-Device-Info not needed.
            for partner in ["Apple", "apple", "APPLE"] {
                let reply = try await exchange(
                    [Self.token, Self.device, Self.status()], partner: partner, body: GatewayHarness.form([("SAMLResponse", Self.saml())]))
                #expect(reply.status == 201, "\(partner): \(reply.body)")
            }
        }
    }

    @Test("v2 success: 201 with the profiles map — notBefore/notAfter milliseconds, issuer Apple, type appleSSO, attributes {value, state}")
    func v2Success() async throws {
        try await withHarness { h in
            let reply = try await h.sendUpstream(
                .POST, "/api/v2/REF/profiles/sso/Apple", body: GatewayHarness.form([("SAMLResponse", Self.saml())]),
                headers: [Self.form, Self.token, Self.device, Self.status()])
            #expect(reply.status == 201, "\(reply.body)")
            #expect(reply.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            AppleProfileShape.expect(reply, mvpd: "Cablevision")
        }
    }
}
