import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import NIOCore
import Testing

/// An `AP-Partner-Framework-Status` whose JSON repeats a key: Foundation would take the first
/// copy, Python/Go/JavaScript the last, so the gateway and a backend could disagree on the MVPD.
@Suite("Partner status with repeated keys")
struct PartnerStatusDuplicateKeyTests {
    static let expires = Int(Date().addingTimeInterval(3600).timeIntervalSince1970 * 1000)

    /// The first `frameworkProviderInfo` names the harness's provider (what Foundation would
    /// read), the second another one (what the backend could read).
    static let variants: [String: String] = [
        "repeated": #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"#
            + #""frameworkProviderInfo":{"id":"cablevision-apple","expirationDate":\#(expires)},"#
            + #""frameworkProviderInfo":{"id":"picker-cable","expirationDate":\#(expires)}}"#,
        "escaped": #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"#
            + #""frameworkProviderInfo":{"id":"cablevision-apple","expirationDate":\#(expires)},"#
            + #""frameworkProviderInf\u006f":{"id":"picker-cable","expirationDate":\#(expires)}}"#,
        "nested": #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"#
            + #""frameworkProviderInfo":{"id":"cablevision-apple","i\u0064":"picker-cable","expirationDate":\#(expires)}}"#,
        // Equal but for case: Go's encoding/json and ASP.NET Core bind either copy.
        "case": #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"#
            + #""frameworkProviderInfo":{"id":"cablevision-apple","ID":"picker-cable","expirationDate":\#(expires)}}"#,
        "case-outer": #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"#
            + #""frameworkProviderInfo":{"id":"cablevision-apple","expirationDate":\#(expires)},"#
            + #""FrameworkProviderInfo":{"id":"picker-cable","expirationDate":\#(expires)}}"#,
    ]

    static func header(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

    @Test("the v2 exchange refuses a repeated key (plain, escaped, nested) with 400 and forwards nothing")
    func gateway() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            for (name, json) in Self.variants.sorted(by: { $0.key < $1.key }) {
                let reply = try await h.exchangeV2(saml, status: Self.header(json))
                ErrorCodeTests.expectError(reply, 400, "invalid_parameter_value", .invalidHeaderPFSPermissionAccessNotPresent)
                #expect(reply.detail("header") == "AP-Partner-Framework-Status", "\(name)")
                #expect((reply.json?["message"] as? String)?.contains("repeats a key") == true, "\(name): \(reply.body)")
            }
            #expect(h.upstream?.store.exchanges.isEmpty == true)
            // The same status without the second copy is an ordinary, accepted exchange.
            let single = Self.variants["repeated"]!.replacingOccurrences(
                of: #","frameworkProviderInfo":{"id":"picker-cable","expirationDate":\#(Self.expires)}"#, with: "")
            #expect(try await h.exchangeV2(saml, status: Self.header(single)).status == 201)
        }
    }

    @Test("the reference upstream reads the header as strictly")
    func referenceUpstream() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            for (name, json) in Self.variants.sorted(by: { $0.key < $1.key }) {
                var request = HTTPClientRequest(url: h.upstreamURL + "/api/v2/REF/profiles/sso/apple")
                request.method = .POST
                for (field, value) in [
                    ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Bearer token-1"),
                    ("AP-Device-Identifier", "fingerprint device-2"), ("X-Device-Info", "e30="),
                    ("AP-Partner-Framework-Status", Self.header(json)),
                ] {
                    request.headers.add(name: field, value: value)
                }
                request.body = .bytes(ByteBuffer(string: GatewayHarness.form([("SAMLResponse", saml)])))
                let response = try await GatewayHarness.client.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code == 400, "\(name)")
            }
            #expect(h.upstream?.store.exchanges.isEmpty == true)
        }
    }
}
