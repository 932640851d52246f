import Foundation
import GatewayTestSupport
import Testing

/// `AP-Partner-Framework-Status` on the v2 routes other than the token exchange, over real HTTP
/// through the gateway: enforced on decisions, forwarded for the backend's fallback on
/// sessions/sso, profiles and logout, counted everywhere.
@Suite("Partner status on every v2 route")
struct PartnerStatusRouteTests {
    static let device: [(String, String)] = [
        ("Authorization", "Bearer token-1"), ("AP-Device-Identifier", "fingerprint ZGV2aWNlLXBzcg=="),
        ("X-Device-Info", "eyJvc05hbWUiOiJ0dk9TIn0="),
    ]
    static let form = ("Content-Type", "application/x-www-form-urlencoded")
    static let json = ("Content-Type", "application/json")

    /// An `appleSSO` profile for the harness device, through the gateway.
    static func signIn(_ h: GatewayHarness) async throws {
        let reply = try await h.send(
            .POST, "/api/v2/REF/profiles/sso/apple",
            body: GatewayHarness.form([("SAMLResponse", GatewayHarness.base64(GatewayHarness.issue()))]),
            headers: device + [form, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus())])
        #expect(reply.status == 201, "\(reply.body)")
    }

    @Test("decisions: forwarded; the backend refuses a refusing status for an appleSSO profile only")
    func decisionsForwarded() async throws {
        try await withHarness { h in
            try await Self.signIn(h)
            let denied = try await h.send(
                .POST, "/api/v2/REF/decisions/authorize/Cablevision", body: #"{"resources":["REF"]}"#,
                headers: Self.device + [Self.json, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: "denied"))])
            #expect(denied.status == 400, "\(denied.body)")
            #expect(denied.code == "invalid_header_pfs_permission_access_not_granted", "the backend, not the gateway, answered")
            let granted = try await h.send(
                .POST, "/api/v2/REF/decisions/authorize/Cablevision", body: #"{"resources":["REF","premium-sports"]}"#,
                headers: Self.device + [Self.json, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus())])
            #expect(granted.status == 200, "\(granted.body)")
            let decisions = granted.json?["decisions"] as? [[String: Any]] ?? []
            #expect(decisions.map { $0["decision"] as? String } == ["Permit", "Deny"])
            #expect(decisions.first?["token"] != nil, "authorize carries the media token")
            #expect(decisions.last?["token"] == nil)
            let metrics = try await h.send(.GET, "/metrics")
            // `samlgate_requests_total` carries the route label too: look for the partner-status series.
            for verdict in ["denied", "granted"] {
                #expect(
                    metrics.body.contains(#"samlgate_partner_status_total{route="v2_decisions",verdict="\#(verdict)"} 1"#)
                        || metrics.body.contains(#"samlgate_partner_status_total{verdict="\#(verdict)",route="v2_decisions"} 1"#),
                    "the \(verdict) status is counted on decisions")
            }
        }
    }

    @Test("no spelling of an exchange path gets past the verifier as a pass-through")
    func pathSpellings() async throws {
        try await withHarness { h in
            let forged = GatewayHarness.base64(try GatewayHarness.attackerIdP.issue(.init(mvpd: GatewayHarness.mvpd, user: "mallory@example.com")))
            // Spellings with one canonical form are verified; the rest are refused outright.
            for path in ["/api/v1/tokens/authn/", "/api/v1/tokens/%61uthn", "/API/v1/tokens/authn"] {
                let reply = try await h.send(.POST, path, body: GatewayHarness.form(GatewayHarness.v1Fields(forged)))
                #expect(reply.status == 400, "\(path): \(reply.status) \(reply.body)")
                #expect(reply.reason == "key_not_trusted", "\(path)")
            }
            for path in [
                "//api/v1/tokens/authn", "/api/v1/./tokens/authn", "/api/v1/x/../tokens/authn", "/api/v1/tokens/authn;jsessionid=1",
                "/api/v2/REF//profiles/sso/Apple",
            ] {
                let reply = try await h.send(.POST, path, body: GatewayHarness.form(GatewayHarness.v1Fields(forged)))
                #expect(reply.status == 400 && reply.reason == "invalid_request_target", "\(path): \(reply.status) \(reply.body)")
            }
            for path in ["/api/v2/REF/profiles/sso/apple/", "/api/v2/REF/profiles/%73so/apple"] {
                let reply = try await h.send(
                    .POST, path, body: GatewayHarness.form([("SAMLResponse", forged)]),
                    headers: Self.device + [Self.form, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: "denied"))])
                #expect(reply.reason == "partner_access_not_granted", "\(path): \(reply.status) \(reply.body)")
            }
            #expect(h.upstream?.store.exchanges.isEmpty == true, "nothing reached the backend")
        }
    }

    @Test("sessions/sso: a denied or unreadable status goes on to the backend, which falls back to basic authentication")
    func sessionsForwarded() async throws {
        try await withHarness { h in
            let body = GatewayHarness.form([("domainName", "example.com"), ("redirectUrl", "https://example.com/done")])
            for status in [GatewayHarness.partnerStatus(access: "denied"), "not base64!"] {
                let reply = try await h.send(
                    .POST, "/api/v2/REF/sessions/sso/apple", body: body,
                    headers: Self.device + [Self.form, ("AP-Partner-Framework-Status", status)])
                #expect(reply.status == 200, "\(reply.body)")
                #expect(reply.json?["actionName"] as? String == "authenticate")
                #expect(reply.json?["actionType"] as? String == "interactive")
                #expect(reply.json?["reasonType"] as? String == "pfs_fallback")
            }
            let missing = try await h.send(
                .POST, "/api/v2/REF/sessions/sso/apple", body: "domainName=example.com",
                headers: Self.device + [Self.form, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: "denied"))])
            #expect(missing.json?["actionName"] as? String == "resume")
            #expect(missing.json?["missingParameters"] as? [String] == ["redirectUrl"])
            let metrics = try await h.send(.GET, "/metrics")
            #expect(
                metrics.body.contains(#"samlgate_partner_status_total{route="v2_sessions_sso",verdict="denied"} 2"#)
                    || metrics.body.contains(#"samlgate_partner_status_total{verdict="denied",route="v2_sessions_sso"} 2"#), "\(metrics.body)")
            #expect(metrics.body.contains("unreadable"))
        }
    }

    @Test("profiles: an appleSSO profile is listed while the status grants access and hidden once it does not")
    func profilesHonourStatus() async throws {
        try await withHarness { h in
            try await Self.signIn(h)
            let granted = try await h.send(
                .GET, "/api/v2/REF/profiles",
                headers: Self.device + [("AP-Partner-Framework-Status", GatewayHarness.partnerStatus())])
            #expect(((granted.json?["profiles"] as? [String: Any])?["Cablevision"] as? [String: Any])?["type"] as? String == "appleSSO")
            let denied = try await h.send(
                .GET, "/api/v2/REF/profiles",
                headers: Self.device + [("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: "denied"))])
            #expect(denied.status == 200, "profiles are not refused for the status: \(denied.body)")
            #expect((denied.json?["profiles"] as? [String: Any])?.isEmpty == true)
        }
    }

    @Test("logout is never refused for the status and answers partner_logout for an appleSSO profile")
    func logoutForwarded() async throws {
        try await withHarness { h in
            try await Self.signIn(h)
            let reply = try await h.send(
                .GET, "/api/v2/REF/logout/Cablevision",
                headers: Self.device + [("AP-Partner-Framework-Status", "garbage")])
            #expect(reply.status == 200, "\(reply.body)")
            let entry = (reply.json?["logouts"] as? [String: Any])?["Cablevision"] as? [String: Any]
            #expect(entry?["actionName"] as? String == "partner_logout")
            #expect(entry?["actionType"] as? String == "partner_interactive")
            let after = try await h.send(
                .POST, "/api/v2/REF/decisions/preauthorize/Cablevision", body: #"{"resources":["REF"]}"#,
                headers: Self.device + [Self.json])
            #expect(after.status == 403)
            #expect(after.code == "authenticated_profile_missing")
        }
    }

    @Test("the v2 exchange path matches the partner in any case (Apple, apple)")
    func partnerCase() async throws {
        try await withHarness { h in
            let reply = try await h.send(
                .POST, "/api/v2/REF/profiles/sso/Apple",
                body: GatewayHarness.form([("SAMLResponse", "not-a-response")]),
                headers: Self.device + [Self.form, ("AP-Partner-Framework-Status", GatewayHarness.partnerStatus(access: "denied"))])
            #expect(reply.reason == "partner_access_not_granted", "the gateway, not the backend, answered: \(reply.body)")
        }
    }
}
