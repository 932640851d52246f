import AsyncHTTPClient
import CLITestSupport
import Foundation
import NIOCore
import Testing

/// The reference upstream's refusals, through the gateway's pass-through, in the backend's
/// enhanced error shape; and `samlgate upstream --config`.
@Suite("Reference upstream")
struct ReferenceUpstreamTests {
    @Test("v1 refusals: unknown requestor, bad deviceType, missing parameters, denied resource, regcode ttl")
    func v1Refusals() async throws {
        try await withHarness { h in
            let unknown = try await h.send(.GET, "/api/v1/config/NOPE")
            #expect(unknown.status == 400)
            #expect(unknown.code == "invalid_requestor")
            let deviceType = try await h.send(.GET, "/api/v1/REF/profile-requests/Cablevision?deviceType=Android")
            #expect(deviceType.code == "invalid_parameter_value")
            let noSSO = try await h.send(.GET, "/api/v1/REF/profile-requests/SecondScreenTV?deviceType=iOS")
            #expect(noSSO.code == "invalid_integration")
            let missing = try await h.send(.GET, "/api/v1/authorize?requestor=REF")
            #expect(missing.status == 400)
            #expect(missing.code == "missing_parameter")
            let ttl = try await h.send(.POST, "/reggie/v1/REF/regcode?deviceId=d&ttl=99999")
            #expect(ttl.code == "invalid_parameter_value")

            let exchanged = try await h.exchangeV1(GatewayHarness.base64(GatewayHarness.issue()), device: "dev-9")
            #expect(exchanged.status == 204)
            let denied = try await h.send(.GET, "/api/v1/authorize?requestor=REF&deviceId=dev-9&resource=premium-sports")
            #expect(denied.status == 403)
            #expect(denied.code == "authorization_denied_by_mvpd")
            for key in ["status", "code", "message", "details", "helpUrl", "trace", "action"] {
                #expect(denied.json?.keys.contains(key) == true, "enhanced error shape: \(key)")
            }
        }
    }

    @Test("v2 refusals: no or unknown bearer token, unknown client secret, missing device headers")
    func v2Refusals() async throws {
        try await withHarness { h in
            let noToken = try await h.send(.GET, "/api/v2/REF/configuration")
            #expect(noToken.status == 401)
            #expect(noToken.code == "invalid_access_token")
            let badToken = try await h.send(.GET, "/api/v2/REF/configuration", headers: [("Authorization", "Bearer forged")])
            #expect(badToken.code == "invalid_access_token")
            let badClient = try await h.send(.POST, "/o/client/token", body: "client_id=x&client_secret=y&grant_type=client_credentials")
            #expect(badClient.status == 400)
            #expect(badClient.json?["error"] as? String == "invalid_client")
            let noDevice = try await h.send(.GET, "/api/v2/REF/profiles", headers: [("Authorization", "Bearer token-1")])
            #expect(noDevice.code == "invalid_header_device_identifier")
        }
    }

    @Test("samlgate upstream --exchange-log N keeps the last N exchanges, oldest dropped; a bad N exits 2")
    func exchangeLog() async throws {
        let (process, url, _, output) = try ServeCommandTests.start(["--port", "0", "--exchange-log", "2"], command: "upstream")
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
