import Foundation
import GatewayTestSupport
import ServerSupport
import Testing

/// The reference upstream's authentication sessions, asked directly: the partner session
/// (`sessions/sso`) and the basic ones, with the documented `actionName`/`actionType`/`reasonType`
/// values and field types (`notBefore`/`notAfter` strings of milliseconds, as in the samples).
@Suite("Reference upstream: sessions")
struct ReferenceSessionTests {
    static let form = ("Content-Type", "application/x-www-form-urlencoded")
    static let device: [(String, String)] = [
        form, ("Authorization", "Bearer token-1"), ("AP-Device-Identifier", "fingerprint ZGV2aWNlLXNlc3Npb24="),
    ]
    static let complete = GatewayHarness.form([("domainName", "example.com"), ("redirectUrl", "https://example.com/done")])

    static func status(_ access: String = "granted", provider: String? = GatewayHarness.platformMappingID) -> (String, String) {
        ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: access, provider: provider))
    }

    /// The fields every session answer has, and the documented values of the three enums.
    static func expectSession(
        _ reply: GatewayHarness.Reply, _ action: String, _ type: String, _ reason: String, mvpd: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let json = reply.json ?? [:]
        #expect(reply.status == 200, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(json["actionName"] as? String == action, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(json["actionType"] as? String == type, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(json["reasonType"] as? String == reason, "\(reply.body)", sourceLocation: sourceLocation)
        #expect(json["sessionId"] is String && json["serviceProvider"] as? String == "REF", sourceLocation: sourceLocation)
        #expect(json["mvpd"] as? String == mvpd, "mvpd present only when known: \(reply.body)", sourceLocation: sourceLocation)
        #expect(json["url"] is String, sourceLocation: sourceLocation)
        if json["code"] != nil {
            #expect(json["code"] is String, sourceLocation: sourceLocation)
            for key in ["notBefore", "notAfter"] {
                let value = json[key] as? String
                #expect(
                    value.map { !$0.isEmpty && $0.allSatisfy(\.isASCII) && Int64($0) != nil } == true, "\(key): \(reply.body)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    @Test("sessions/sso: partner_profile, the fallbacks (pfs, configuration, missing parameters), authorize once a profile exists")
    func partnerSession() async throws {
        try await withHarness { h in
            let path = "/api/v2/REF/sessions/sso/Apple"
            let profile = try await h.sendUpstream(.POST, path, body: Self.complete, headers: Self.device + [Self.status()])
            Self.expectSession(profile, "partner_profile", "direct", "none", mvpd: "Cablevision")
            #expect(profile.json?["url"] as? String == "/api/v2/REF/profiles/sso/Apple")
            let request = profile.json?["authenticationRequest"] as? [String: Any]
            #expect(request?["type"] as? String == "saml" && request?["request"] is String && request?["attributesNames"] is [String])
            #expect(profile.json?["code"] == nil)

            for status in [nil, Self.status("denied"), ("AP-Partner-Framework-Status", "not base64!"), Self.status(provider: nil)] {
                let reply = try await h.sendUpstream(.POST, path, body: Self.complete, headers: Self.device + (status.map { [$0] } ?? []))
                Self.expectSession(reply, "authenticate", "interactive", "pfs_fallback", mvpd: nil)
                let code = reply.json?["code"] as? String ?? "?"
                #expect(reply.json?["url"] as? String == "/api/v2/authenticate/REF/\(code)")
            }
            let picker = try await h.sendUpstream(.POST, path, body: Self.complete, headers: Self.device + [Self.status(provider: "PickerCable")])
            Self.expectSession(picker, "authenticate", "interactive", "configuration_fallback", mvpd: "PickerCable")
            let missing = try await h.sendUpstream(.POST, path, body: "domainName=example.com", headers: Self.device + [Self.status("denied")])
            Self.expectSession(missing, "resume", "direct", "missing_parameters_fallback", mvpd: nil)
            #expect(missing.json?["missingParameters"] as? [String] == ["redirectUrl"])
            #expect(missing.json?["url"] as? String == "/api/v2/REF/sessions/\(missing.json?["code"] as? String ?? "?")")
            ReferenceUpstreamTests.expectRefusal(
                try await h.sendUpstream(.POST, "/api/v2/REF/sessions/sso/Google", body: Self.complete, headers: Self.device), 400,
                .invalidParameterPartner)

            let exchanged = try await h.sendUpstream(
                .POST, "/api/v2/REF/profiles/sso/Apple", body: GatewayHarness.form([("SAMLResponse", GatewayHarness.base64(GatewayHarness.issue()))]),
                headers: Self.device + [Self.status()])
            #expect(exchanged.status == 201, "\(exchanged.body)")
            let authorize = try await h.sendUpstream(.POST, path, body: Self.complete, headers: Self.device + [Self.status()])
            Self.expectSession(authorize, "authorize", "direct", "authenticatedSSO", mvpd: "Cablevision")
            #expect(authorize.json?["url"] as? String == "/api/v2/REF/decisions/authorize/Cablevision")
        }
    }

    @Test("basic sessions: create (resume/none when parameters are missing), resume by POST (retry, then authenticate), unknown code")
    func basicSession() async throws {
        try await withHarness { h in
            let created = try await h.sendUpstream(.POST, "/api/v2/REF/sessions", body: "", headers: Self.device)
            Self.expectSession(created, "resume", "direct", "none", mvpd: nil)
            #expect(created.json?["missingParameters"] as? [String] == ["mvpd", "domainName", "redirectUrl"])
            let code = try #require(created.json?["code"] as? String)
            // Resumed from a second application: no device headers.
            let token = [Self.form, ("Authorization", "Bearer token-1")]
            let partly = try await h.sendUpstream(
                .POST, "/api/v2/REF/sessions/\(code)", body: "mvpd=SecondScreenTV&domainName=example.com", headers: token)
            Self.expectSession(partly, "retry", "direct", "none", mvpd: "SecondScreenTV")
            #expect(partly.json?["missingParameters"] as? [String] == ["redirectUrl"])
            #expect(partly.json?["code"] as? String == code, "a retry keeps the code")
            let resumed = try await h.sendUpstream(
                .POST, "/api/v2/REF/sessions/\(code)", body: "redirectUrl=https%3A%2F%2Fexample.com", headers: token)
            Self.expectSession(resumed, "authenticate", "interactive", "none", mvpd: "SecondScreenTV")
            #expect(resumed.json?["url"] as? String == "/api/v2/authenticate/REF/\(resumed.json?["code"] as? String ?? "?")")
            ReferenceUpstreamTests.expectRefusal(
                try await h.sendUpstream(.POST, "/api/v2/REF/sessions/\(code)", body: Self.complete, headers: token), 400,
                .invalidAuthenticationSession)
            ReferenceUpstreamTests.expectRefusal(
                try await h.sendUpstream(.POST, "/api/v2/REF/sessions", body: "mvpd=Nowhere", headers: Self.device), 400, .invalidParameterMVPD)
            let login = try await h.sendUpstream(.GET, "/api/v2/authenticate/REF/NOCODE", headers: [])
            #expect(login.status == 400 && login.headers.first(name: "Content-Type")?.hasPrefix("text/html") == true, "\(login.body)")
        }
    }
}
