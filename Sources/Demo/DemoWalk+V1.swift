import Foundation

/// The REST API v1 cookbook: valid token? → platform SSO signed in? → configuration → profile
/// request → VSA → token exchange → token generated? → authorization → media token → user
/// metadata → logout; on denial, an MVPD without SSO or an expired session, the second-screen
/// registration-code fallback.
extension DemoWalk {
    func v1(_ scenario: DemoScenario) async {
        let requestor = settings.requestor
        let device: [(String, String)] = [("requestor", requestor), ("deviceId", deviceID)]
        await step(
            "valid token?", .GET, "/api/v1/checkauthn", query: device, expect: 403, "code=authentication_session_missing",
            decisive: Self.code)
        let expected =
            scenario == .denied
            ? "accessStatus=denied → invalid_header_pfs_permission_access_not_granted" : "accessStatus=granted provider=\(vsa.providerID)"
        local("platform SSO signed in?", frameworkState, expected: expected)
        var fallbackMVPD = settings.mvpd
        if scenario != .denied {
            let mvpd = scenario == .unsupported ? settings.fallbackMVPD : settings.mvpd
            let enabled =
                scenario == .unsupported
                ? "enablePlatformServices=false boardingStatus=NOT_SUPPORTED"
                : "enablePlatformServices=true boardingStatus=SUPPORTED"
            await step(
                "configuration", .GET, "/api/v1/config/\(requestor)", expect: 200, "\(mvpd): \(enabled)",
                decisive: Self.mvpdProperties(mvpd))
            if scenario == .unsupported {
                fallbackMVPD = settings.fallbackMVPD
            } else if await v1PartnerExchange(scenario, device: device) {
                return
            }
        }
        await v1SecondScreen(mvpd: fallbackMVPD, device: device)
    }

    /// Profile request → VSA → exchange → token → authorization → metadata → logout. Returns
    /// false when the exchange was (rightly) refused and the fallback must follow.
    func v1PartnerExchange(_ scenario: DemoScenario, device: [(String, String)]) async -> Bool {
        let mvpd = settings.mvpd
        guard
            let request = await step(
                "profile request", .GET, "/api/v1/\(settings.requestor)/profile-requests/\(mvpd)",
                query: device + [("deviceType", "tvOS")], expect: 200, "verificationToken=AttributeQuery",
                decisive: { VSAFramework.queryID($0.text) == nil ? "not an AttributeQuery" : "verificationToken=AttributeQuery" })
        else { return true }
        let attributes = VSAFramework.requestedAttributes(request.text)
        let saml: [UInt8]
        do {
            saml = try vsa.respond(
                verificationToken: request.text, attributeNames: attributes, mvpd: mvpd,
                expiredSession: scenario == .expired)
        } catch {
            localFailure("TV provider signs (VSA)", "\(error)")
            return true
        }
        local(
            "TV provider signs (VSA)", scenario == .expired ? "signed response, session expired" : "signed response",
            expected: scenario == .expired ? "signed response, session expired" : "signed response")
        let form = device + [("mvpd", mvpd), ("deviceType", "tvOS"), ("SAMLResponse", Data(saml).base64EncodedString())]
        if scenario == .expired {
            await step(
                "token exchange", .POST, "/api/v1/tokens/authn", body: .form(form), expect: 400,
                "code=invalid_parameter_saml_response reason=expired", decisive: Self.code)
            return false
        }
        guard
            await step(
                "token exchange", .POST, "/api/v1/tokens/authn", body: .form(form), expect: 204, "(empty)",
                decisive: Self.nothing) != nil
        else { return true }
        await v1Authenticated(mvpd: mvpd, tokenSource: "Apple", device: device)
        return true
    }

    /// Registration code → second-screen login → token → authorization → metadata → logout.
    func v1SecondScreen(mvpd: String, device: [(String, String)]) async {
        guard
            let registration = await step(
                "registration code", .POST, "/reggie/v1/\(settings.requestor)/regcode", body: .form([("deviceId", deviceID)]),
                expect: 201, "code issued", decisive: { ($0.string("code") ?? "").isEmpty ? "no code" : "code issued" }),
            let code = registration.string("code")
        else { return }
        guard
            await step(
                "initiate authentication", .GET, "/api/v1/authenticate",
                query: [
                    ("requestor_id", settings.requestor), ("mso_id", mvpd), ("reg_code", code), ("domain_name", "demo.example.com"),
                    ("noflash", "true"), ("no_iframe", "true"), ("redirect_url", "https://demo.example.com/done"),
                ],
                expect: 302, "Location=/reference/login", decisive: Self.location) != nil
        else { return }
        guard
            await step(
                "MVPD login (second screen)", .POST, "/reference/login",
                body: .form([("code", code), ("user", "demo-user")]), expect: 200, "signed in",
                decisive: { $0.text.contains("signed in") ? "signed in" : "not signed in" }) != nil
        else { return }
        await v1Authenticated(mvpd: mvpd, tokenSource: mvpd, device: device)
    }

    func v1Authenticated(mvpd: String, tokenSource: String, device: [(String, String)]) async {
        await step("token generated?", .GET, "/api/v1/tokens/authn", query: device, expect: 200, "mvpd=\(mvpd)", decisive: Self.fields("mvpd"))
        await step(
            "authorization", .GET, "/api/v1/authorize", query: device + [("resource", settings.resource)], expect: 200,
            "resource=\(settings.resource)", decisive: Self.fields("resource"))
        await step(
            "short media token", .GET, "/api/v1/mediatoken", query: device + [("resource", settings.resource)], expect: 200,
            "serializedToken=present", decisive: { ($0.string("serializedToken") ?? "").isEmpty ? "serializedToken=none" : "serializedToken=present" }
        )
        await step(
            "user metadata", .GET, "/api/v1/tokens/usermetadata", query: device, expect: 200, "tokenSource=\(tokenSource)",
            decisive: { reply in
                "tokenSource=" + ((reply.json?["data"] as? [String: Any])?["tokenSource"] as? String ?? reply.string("tokenSource") ?? "none")
            })
        await step("logout", .DELETE, "/api/v1/logout", query: device, expect: 204, "(empty)", decisive: Self.nothing)
        await step(
            "valid token?", .GET, "/api/v1/checkauthn", query: device, expect: 403, "code=authentication_session_missing",
            decisive: Self.code)
    }
}
