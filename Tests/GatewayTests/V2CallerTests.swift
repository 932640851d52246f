import Foundation
@_spi(Benchmarks) import Gateway
import GatewayTestSupport
import ServerSupport
import Testing

/// What the backend refuses on the v2 exchange before it reads the SAML response — the access
/// token, the device identifier, the partner — the gateway refuses first, with the backend's
/// code, before the response is verified and its assertion recorded: the same response is still
/// good afterwards (a refusal for a header must not spend the user's sign-in).
@Suite("v2 exchange: the caller checked before the response")
struct V2CallerTests {
    static let form = ("Content-Type", "application/x-www-form-urlencoded")
    static let token = ("Authorization", "Bearer token-1")
    static let device = ("AP-Device-Identifier", "fingerprint ZGV2aWNlLTI=")

    static let cases: [(name: String, path: String, headers: [(String, String)], status: Int, reason: String, code: BackendErrorCode)] = [
        ("no Authorization", "apple", [device], 401, "missing_parameter", .invalidAccessTokenClientApplication),
        (
            "Basic credentials", "apple", [("Authorization", "Basic dXNlcjpwdw=="), device], 401, "invalid_parameter_value",
            .invalidAccessTokenClientApplication
        ),
        (
            "Bearer without a token", "apple", [("Authorization", "Bearer   "), device], 401, "invalid_parameter_value",
            .invalidAccessTokenClientApplication
        ),
        // Spellings a strict resolver refuses: the backend would spend the response on them.
        (
            "Bearer and two spaces", "apple", [("Authorization", "Bearer  token-1"), device], 401, "invalid_parameter_value",
            .invalidAccessTokenClientApplication
        ),
        (
            "Bearer and a tab", "apple", [("Authorization", "Bearer\ttoken-1"), device], 401, "invalid_parameter_value",
            .invalidAccessTokenClientApplication
        ),
        (
            "a device identifier after two spaces", "apple", [token, ("AP-Device-Identifier", "fingerprint  ZGV2aWNl")], 400,
            "invalid_parameter_value", .invalidHeaderDeviceIdentifier
        ),
        ("no device identifier", "apple", [token], 400, "missing_parameter", .invalidHeaderDeviceIdentifier),
        (
            "a device identifier of another type", "apple", [token, ("AP-Device-Identifier", "idfa ZGV2aWNl")], 400,
            "invalid_parameter_value", .invalidHeaderDeviceIdentifier
        ),
        (
            "a device identifier that is not base64", "apple", [token, ("AP-Device-Identifier", "fingerprint dev ice")], 400,
            "invalid_parameter_value", .invalidHeaderDeviceIdentifier
        ),
        ("another partner", "Google", [token, device], 400, "invalid_partner", .invalidParameterPartner),
        ("a partner with a suffix", "apple-tv", [token, device], 400, "invalid_partner", .invalidParameterPartner),
    ]

    @Test("each fault refused with the backend's status and code; nothing forwarded; the response then exchanged once")
    func callerFaults() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            let status = ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus())
            for fault in Self.cases {
                let reply = try await h.send(
                    .POST, "/api/v2/REF/profiles/sso/\(fault.path)", body: GatewayHarness.form([("SAMLResponse", saml)]),
                    headers: [Self.form, status] + fault.headers)
                ErrorCodeTests.expectError(reply, fault.status, fault.reason, fault.code)
            }
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            // Nothing was recorded against replay: the response is good, once.
            #expect(try await h.exchangeV2(saml).status == 201)
            #expect(try await h.exchangeV2(saml).reason == "replayed")
        }
    }

    @Test("the partner in the path in any case, and the documented sample headers, pass")
    func documentedSpellings() async throws {
        try await withHarness { h in
            for partner in ["Apple", "APPLE", "apple"] {
                let reply = try await h.send(
                    .POST, "/api/v2/REF/profiles/sso/\(partner)",
                    body: GatewayHarness.form([("SAMLResponse", GatewayHarness.base64(GatewayHarness.issue()))]),
                    headers: [
                        Self.form, ("Authorization", "bearer token-1"),
                        ("AP-Device-Identifier", "fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi"),
                        ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus()),
                    ])
                #expect(reply.status == 201, "\(partner): \(reply.body)")
            }
        }
    }
}
