import AsyncHTTPClient
import CLITestSupport
import Foundation
import GatewayTestSupport
import NIOCore
import ServerSupport
import Testing

/// The reference upstream's refusals, asked directly (and once through the gateway's
/// pass-through), in the backend's enhanced error shape with the code and status it documents for
/// each case; and `samlgate upstream --config`.
@Suite("Reference upstream")
struct ReferenceUpstreamTests {
    static let device: [(String, String)] = [("Authorization", "Bearer token-1"), ("AP-Device-Identifier", "fingerprint ZGV2aWNlLXJlZg==")]

    /// An enhanced error with the backend's code and `status` for it, the documented `action`.
    static func expectRefusal(
        _ reply: GatewayHarness.Reply, _ status: Int, _ code: BackendErrorCode, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reply.status == status, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.code == code.rawValue, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.json?["status"] as? Int == code.status(forHTTP: status), sourceLocation: sourceLocation)
        #expect(reply.json?["action"] as? String == code.action.rawValue, sourceLocation: sourceLocation)
    }

    @Test("v1 refusals: unknown requestor, bad deviceType, no integration, missing parameters, denied resource, regcode ttl")
    func v1Refusals() async throws {
        try await withHarness { h in
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/config/NOPE"), 400, .invalidRequestor)
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v1/REF/profile-requests/Cablevision?deviceType=Android"), 400, .invalidDeviceInfo)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/REF/profile-requests/Cablevision"), 400, .invalidDeviceInfo)
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v1/REF/profile-requests/SecondScreenTV?deviceType=iOS"), 400, .unknownIntegration)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authorize?deviceId=d&resource=r"), 400, .invalidRequestor)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authorize?requestor=REF"), 400, .invalidDeviceID)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/checkauthn?requestor=REF&deviceId=nobody"), 403, .authenticationSessionMissing)
            Self.expectRefusal(try await h.sendUpstream(.POST, "/reggie/v1/REF/regcode?deviceId=d&ttl=99999"), 400, .internalError)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authenticate?requestor_id=REF&mso_id=Cablevision"), 400, .invalidParameterCode)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authenticate?reg_code=X&mso_id=Cablevision"), 400, .invalidRequestor)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authenticate?reg_code=X&requestor_id=REF"), 400, .invalidParameterMVPD)

            let exchanged = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()), device: "dev-9")
            #expect(exchanged.status == 204)
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v1/authorize?requestor=REF&deviceId=dev-9"), 400, .missingResource)
            let denied = try await h.send(.GET, "/api/v1/authorize?requestor=REF&deviceId=dev-9&resource=premium-sports")
            Self.expectRefusal(denied, 403, .authorizationDeniedByMVPD)
            for key in ["status", "code", "message", "helpUrl", "trace", "action"] {
                #expect(denied.json?.keys.contains(key) == true, "enhanced error shape: \(key)")
            }
            #expect(denied.json?["trace"] as? String == denied.headers.first(name: "X-Request-Id"), "trace is the gateway's request id")
        }
    }

    @Test("v2 refusals: no or unknown bearer token (401), unknown client secret, service provider, device identifier; X-Device-Info optional")
    func v2Refusals() async throws {
        try await withHarness { h in
            Self.expectRefusal(try await h.sendUpstream(.GET, "/api/v2/REF/configuration"), 401, .invalidAccessTokenClientApplication)
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v2/REF/configuration", headers: [("Authorization", "Bearer forged")]), 401,
                .invalidAccessTokenClientApplication)
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v2/REF/configuration", headers: [("Authorization", "Basic dXNlcjpwdw==")]), 401,
                .invalidAccessTokenClientApplication)
            let badClient = try await h.sendUpstream(
                .POST, "/o/client/token", body: "client_id=x&client_secret=y&grant_type=client_credentials")
            #expect(badClient.status == 400)
            #expect(badClient.json?["error"] as? String == "invalid_client")
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v2/NOPE/profiles", headers: Self.device), 400, .invalidParameterServiceProvider)
            // Configuration needs no device headers.
            #expect(try await h.sendUpstream(.GET, "/api/v2/REF/configuration", headers: [("Authorization", "Bearer token-1")]).status == 200)
            Self.expectRefusal(
                try await h.sendUpstream(.GET, "/api/v2/REF/profiles", headers: [("Authorization", "Bearer token-1")]), 400,
                .invalidHeaderDeviceIdentifier)
            for malformed in ["idfa ZGV2aWNl", "fingerprint", "fingerprint not base64!", "ZGV2aWNl"] {
                let reply = try await h.sendUpstream(
                    .GET, "/api/v2/REF/profiles", headers: [("Authorization", "Bearer token-1"), ("AP-Device-Identifier", malformed)])
                Self.expectRefusal(reply, 400, .invalidHeaderDeviceIdentifier)
            }
            // X-Device-Info: absent, or anything (the documentation's own sample is not valid JSON).
            for info in [nil, "ewoJInByaW1hcnlIYXJkd2FyZVR5cGUiOiAiU2V0VG9wQm94IiwKCSJtb2RlbCI6ICJUViA1dGggR2VuIiwKfQ==", "garbage"] {
                let reply = try await h.sendUpstream(
                    .GET, "/api/v2/REF/profiles", headers: Self.device + (info.map { [("X-Device-Info", $0)] } ?? []))
                #expect(reply.status == 200, "\(info ?? "absent"): \(reply.body)")
            }
            let json = ("Content-Type", "application/json")
            Self.expectRefusal(
                try await h.sendUpstream(
                    .POST, "/api/v2/REF/decisions/authorize/Nowhere", body: #"{"resources":["REF"]}"#, headers: Self.device + [json]),
                400, .invalidParameterMVPD)
            Self.expectRefusal(
                try await h.sendUpstream(
                    .POST, "/api/v2/REF/decisions/authorize/Cablevision", body: #"{"resources":[]}"#, headers: Self.device + [json]),
                400, .invalidParameterResources)
            Self.expectRefusal(
                try await h.sendUpstream(
                    .POST, "/api/v2/REF/decisions/authorize/Cablevision", body: #"{"resources":["REF"]}"#, headers: Self.device + [json]),
                403, .authenticatedProfileMissing)
            #expect(
                try await h.sendUpstream(.POST, "/api/v2/REF/decisions/other/Cablevision", body: "{}", headers: Self.device + [json]).status == 404)
        }
    }

    @Test("v2 logout of an MVPD without a valid profile: invalid/none")
    func logoutWithoutProfile() async throws {
        try await withHarness { h in
            let reply = try await h.sendUpstream(.GET, "/api/v2/REF/logout/Cablevision?redirectUrl=https%3A%2F%2Fexample.com", headers: Self.device)
            #expect(reply.status == 200, "\(reply.body)")
            let entry = (reply.json?["logouts"] as? [String: Any])?["Cablevision"] as? [String: Any]
            #expect(entry?["actionName"] as? String == "invalid")
            #expect(entry?["actionType"] as? String == "none")
            #expect(entry?["mvpd"] as? String == "Cablevision")
            #expect(entry?["url"] == nil)
        }
    }

    @Test("samlgate upstream --exchange-log N keeps the last N exchanges, oldest dropped; a bad N exits 2")
    func exchangeLog() async throws {
        let (process, url, _, output) = try ServerProcess.start(["--port", "0", "--exchange-log", "2"], command: "upstream")
        defer {
            process.terminate()
            process.waitUntilExit()
            _ = output
        }
        var sent: [String] = []
        for index in 1...3 {
            // The reference upstream checks base64 of XML, not the signature (the gateway does).
            let saml = Data("<r n=\"\(index)\"/>".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D")
            var request = HTTPClientRequest(url: url + "/api/v1/tokens/authn")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: "requestor=REF&deviceId=log-\(index)&mvpd=Cablevision&deviceType=iOS&SAMLResponse=\(saml)"))
            let response = try await GatewayHarness.client.execute(request, timeout: .seconds(10))
            #expect(response.status.code == 204)
            sent.append(saml)
        }
        let response = try await GatewayHarness.client.execute(HTTPClientRequest(url: url + "/reference/exchanges"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [[String: Any]])
        #expect(items.compactMap { $0["SAMLResponse"] as? String } == Array(sent.suffix(2)))

        let bad = try SamlgateProcess.run(["upstream", "--port", "0", "--exchange-log", "2000000"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--exchange-log"), "\(bad.stderr)")
    }

    @Test("samlgate upstream --config: a broken file is refused with its path and key, exit 2")
    func configErrors() throws {
        let missing = try SamlgateProcess.temporaryFile("reference.yaml", Data("requestors:\n  - id: REF\n    mvpds: [Ghost]\nmvpds: []\n".utf8))
        let result = try SamlgateProcess.run(["upstream", "--config", missing, "--port", "0"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("requestor REF names MVPD Ghost"), "\(result.stderr)")
        let typo = try SamlgateProcess.temporaryFile("reference2.yaml", Data("requestors: 3\nmvpds: []\n".utf8))
        let typoResult = try SamlgateProcess.run(["upstream", "--config", typo, "--port", "0"])
        #expect(typoResult.status == 2)
        #expect(typoResult.stderr.contains("requestors"), "\(typoResult.stderr)")
    }
}
