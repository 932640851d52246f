import Foundation

/// The REST API v2 cookbook: registration → access token → profiles with the partner status →
/// configuration → sessions/sso/apple → VSA → profiles/sso/apple → preauthorize → authorize →
/// logout (`partner_logout`); on denial, an MVPD without SSO or an expired provider, the
/// basic-authentication fallback the backend answers, and the gateway's SDK codes.
extension DemoWalk {
    func v2(_ scenario: DemoScenario) async {
        let sp = settings.requestor
        guard let bearer = await v2AccessToken() else { return }
        let deviceInfo = Data(
            #"{"primaryHardwareType":"SetTopBox","model":"Apple TV","manufacturer":"Apple","osName":"tvOS","osVendor":"Apple","osVersion":"18.0"}"#
                .utf8
        )
        .base64EncodedString()
        var headers = [
            ("Authorization", "Bearer " + bearer), ("X-Device-Info", deviceInfo),
            ("AP-Device-Identifier", "fingerprint " + Data(deviceID.utf8).base64EncodedString()),
        ]

        let expectedState: String
        switch scenario {
        case .denied: expectedState = "accessStatus=denied → invalid_header_pfs_permission_access_not_granted"
        case .expired: expectedState = "accessStatus=granted provider=\(vsa.providerID) expired → invalid_header_pfs_provider_info_expired"
        default: expectedState = "accessStatus=granted provider=\(vsa.providerID)"
        }
        local("platform SSO signed in?", frameworkState, expected: expectedState)
        headers.append(("AP-Partner-Framework-Status", vsa.header))
        await step(
            "profiles (partner status)", .GET, "/api/v2/\(sp)/profiles", headers: headers, expect: 200, "profiles=none",
            decisive: Self.profiles)
        let mvpd = scenario == .unsupported ? settings.fallbackMVPD : settings.mvpd
        let enabled =
            scenario == .unsupported
            ? "enablePlatformServices=false boardingStatus=NOT_SUPPORTED"
            : "enablePlatformServices=true boardingStatus=SUPPORTED"
        await step(
            "configuration", .GET, "/api/v2/\(sp)/configuration", headers: headers, expect: 200, "\(mvpd): \(enabled)",
            decisive: Self.mvpdProperties(mvpd))
        let session: [(String, String)] = [("domainName", "demo.example.com"), ("redirectUrl", "https://demo.example.com/done")]
        let expectedSession: String
        switch scenario {
        case .happy: expectedSession = "actionName=partner_profile actionType=direct authenticationRequest.type=saml"
        case .unsupported: expectedSession = "actionName=authenticate actionType=interactive reasonType=configuration_fallback"
        default: expectedSession = "actionName=authenticate actionType=interactive reasonType=pfs_fallback"
        }
        guard
            let started = await step(
                "partner session", .POST, "/api/v2/\(sp)/sessions/sso/apple", body: .form(session),
                headers: headers, expect: 200, expectedSession, decisive: Self.session)
        else { return }
        if scenario == .happy {
            await v2PartnerProfile(started, headers: headers)
        } else {
            await v2Fallback(scenario, started: started, headers: headers, mvpd: mvpd)
        }
    }

    /// Registration and access token; the bearer token.
    func v2AccessToken() async -> String? {
        guard
            let client = await step(
                "client registration", .POST, "/o/client/register", body: .json(["software_statement": "demo-software-statement"]),
                expect: 201, "client_id issued", decisive: { ($0.string("client_id") ?? "").isEmpty ? "no client_id" : "client_id issued" }),
            let id = client.string("client_id"), let secret = client.string("client_secret")
        else { return nil }
        let token = await step(
            "access token", .POST, "/o/client/token",
            body: .form([("client_id", id), ("client_secret", secret), ("grant_type", "client_credentials")]),
            expect: 201, "token_type=bearer", decisive: Self.fields("token_type"))
        return token?.string("access_token")
    }

    /// VSA signs → profiles/sso/apple → profiles → preauthorize → authorize → logout.
    func v2PartnerProfile(_ started: DemoReply, headers: [(String, String)]) async {
        let sp = settings.requestor, mvpd = settings.mvpd
        let request = started.json?["authenticationRequest"] as? [String: Any]
        let saml: [UInt8]
        do {
            saml = try vsa.respond(
                verificationToken: request?["request"] as? String ?? "",
                attributeNames: request?["attributesNames"] as? [String] ?? [], mvpd: mvpd, expiredSession: false)
        } catch {
            localFailure("TV provider signs (VSA)", "\(error)")
            return
        }
        local("TV provider signs (VSA)", "signed response", expected: "signed response")
        guard
            await step(
                "partner profile", .POST, "/api/v2/\(sp)/profiles/sso/apple",
                body: .form([("SAMLResponse", Data(saml).base64EncodedString())]), headers: headers, expect: 201,
                "\(mvpd)=appleSSO", decisive: Self.profiles) != nil
        else { return }
        await v2Authenticated(mvpd: mvpd, type: "appleSSO", headers: headers, logout: "actionName=partner_logout actionType=partner_interactive")
    }

    /// What the gateway answers a partner profile the status does not allow, then the
    /// second-screen login of the basic fallback.
    func v2Fallback(_ scenario: DemoScenario, started: DemoReply, headers: [(String, String)], mvpd: String) async {
        let sp = settings.requestor
        if scenario != .unsupported {
            let code =
                scenario == .denied
                ? "invalid_header_pfs_permission_access_not_granted reason=partner_access_not_granted"
                : "invalid_header_pfs_provider_info_expired reason=partner_provider_expired"
            let saml = (try? vsa.respond(verificationToken: "", attributeNames: [], mvpd: mvpd, expiredSession: false)) ?? []
            await step(
                "partner profile (refused)", .POST, "/api/v2/\(sp)/profiles/sso/apple",
                body: .form([("SAMLResponse", Data(saml).base64EncodedString())]), headers: headers,
                expect: 400, "code=\(code)", decisive: Self.code)
        }
        guard let code = started.string("code") else { return }
        guard
            await step(
                "MVPD login page", .GET, "/api/v2/authenticate/\(sp)/\(code)", expect: 302, "Location=/reference/login",
                decisive: Self.location) != nil
        else { return }
        let login: [(String, String)] = [("code", code), ("user", "demo-user")] + (started.string("mvpd") == nil ? [("mvpd", mvpd)] : [])
        guard
            await step(
                "MVPD login (second screen)", .POST, "/reference/login", body: .form(login), expect: 200, "signed in",
                decisive: { $0.text.contains("signed in") ? "signed in" : "not signed in" }) != nil
        else { return }
        await v2Authenticated(mvpd: mvpd, type: "regular", headers: headers, logout: "actionName=logout actionType=interactive")
    }

    func v2Authenticated(mvpd: String, type: String, headers: [(String, String)], logout: String) async {
        let sp = settings.requestor
        await step(
            "profiles (partner status)", .GET, "/api/v2/\(sp)/profiles", headers: headers, expect: 200, "\(mvpd)=\(type)",
            decisive: Self.profiles)
        let denied = settings.deniedResource
        let deniedHere = mvpd == settings.mvpd
        await step(
            "preauthorize", .POST, "/api/v2/\(sp)/decisions/preauthorize/\(mvpd)",
            body: .json(["resources": [settings.resource, denied]]), headers: headers, expect: 200,
            "\(settings.resource)=Permit \(denied)=\(deniedHere ? "Deny" : "Permit") mediaToken=no", decisive: Self.decisions)
        await step(
            "authorize", .POST, "/api/v2/\(sp)/decisions/authorize/\(mvpd)", body: .json(["resources": [settings.resource]]),
            headers: headers, expect: 200, "\(settings.resource)=Permit mediaToken=yes", decisive: Self.decisions)
        await step(
            "logout", .GET, "/api/v2/\(sp)/logout/\(mvpd)", query: [("redirectUrl", "https://demo.example.com/done")],
            headers: headers, expect: 200, logout,
            decisive: { reply in
                let entry = (reply.json?["logouts"] as? [String: Any])?[mvpd] as? [String: Any]
                return "actionName=\(entry?["actionName"] as? String ?? "none") actionType=\(entry?["actionType"] as? String ?? "none")"
            })
    }

    // MARK: decisive fields

    /// `Cablevision=appleSSO …` or `profiles=none`.
    static func profiles(_ reply: DemoReply) -> String {
        guard let profiles = reply.json?["profiles"] as? [String: Any] else { return "no profiles object" }
        if profiles.isEmpty { return "profiles=none" }
        return profiles.keys.sorted().map { "\($0)=" + (((profiles[$0] as? [String: Any])?["type"] as? String) ?? "none") }
            .joined(separator: " ")
    }

    static func session(_ reply: DemoReply) -> String {
        var text = "actionName=\(reply.string("actionName") ?? "none") actionType=\(reply.string("actionType") ?? "none")"
        if let request = reply.json?["authenticationRequest"] as? [String: Any] {
            text += " authenticationRequest.type=\(request["type"] as? String ?? "none")"
        } else {
            text += " reasonType=\(reply.string("reasonType") ?? "none")"
        }
        return text
    }

    /// `REF=Permit premium-sports=Deny mediaToken=no`.
    static func decisions(_ reply: DemoReply) -> String {
        guard let items = reply.json?["decisions"] as? [[String: Any]] else { return "no decisions" }
        var parts = items.map { item in
            "\(item["resource"] as? String ?? "?")=" + ((item["authorized"] as? Bool ?? false) ? "Permit" : "Deny")
        }
        parts.append("mediaToken=" + (items.contains { $0["token"] != nil } ? "yes" : "no"))
        return parts.joined(separator: " ")
    }
}
