import Foundation
import Hummingbird
import ServerSupport
import NIOCore
import PartnerStatus

/// REST API v2 as the Apple SSO cookbook walks it: client registration and access token,
/// configuration, profiles, partner and basic sessions, decisions, logout.
extension ReferenceRoutes {
    func addV2(to router: Router<BasicRequestContext>) {
        router.post("/o/client/register") { request, _ in try await registerClient(request) }
        router.post("/o/client/token") { request, _ in try await accessToken(request) }
        router.get("/api/v2/:serviceProvider/configuration") { request, context in
            try v2Configuration(request, serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
        router.get("/api/v2/:serviceProvider/profiles") { request, context in
            try profiles(request, serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: nil)
        }
        router.get("/api/v2/:serviceProvider/profiles/:mvpd") { request, context in
            try profiles(request, serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: context.parameters.get("mvpd"))
        }
        router.post("/api/v2/:serviceProvider/sessions/sso/:partner") { request, context in
            try await partnerSession(
                request, serviceProvider: context.parameters.get("serviceProvider") ?? "",
                partner: context.parameters.get("partner") ?? "")
        }
        router.post("/api/v2/:serviceProvider/sessions") { request, context in
            try await basicSession(request, serviceProvider: context.parameters.get("serviceProvider") ?? "", code: nil)
        }
        router.put("/api/v2/:serviceProvider/sessions/:code") { request, context in
            try await basicSession(
                request, serviceProvider: context.parameters.get("serviceProvider") ?? "",
                code: context.parameters.get("code"))
        }
        router.post("/api/v2/:serviceProvider/decisions/:kind/:mvpd") { request, context in
            try await decisions(
                request, serviceProvider: context.parameters.get("serviceProvider") ?? "",
                kind: context.parameters.get("kind") ?? "", mvpd: context.parameters.get("mvpd") ?? "")
        }
        router.get("/api/v2/:serviceProvider/logout") { request, context in
            try v2Logout(request, serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: nil)
        }
        router.get("/api/v2/:serviceProvider/logout/:mvpd") { request, context in
            try v2Logout(request, serviceProvider: context.parameters.get("serviceProvider") ?? "", mvpd: context.parameters.get("mvpd"))
        }
        router.get("/reference/logout") { _, _ in
            ReferenceReply.html(200, "<!doctype html><title>Signed out</title><p>You are signed out of your TV provider.</p>")
        }
    }

    // MARK: client registration

    /// `POST /o/client/register` (JSON `software_statement`, optional `redirect_uri`): `201`.
    func registerClient(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] else {
            return ReferenceReply.oauth("invalid_request")
        }
        guard let statement = object["software_statement"] as? String, !statement.isEmpty else {
            return ReferenceReply.oauth("invalid_software_statement")
        }
        let id = store.nextID("client-"), secret = store.nextID("secret-")
        store.registerClient(id: id, secret: secret)
        return ReferenceReply.json(
            201,
            [
                "client_id": id, "client_secret": secret, "client_id_issued_at": Int(Date().timeIntervalSince1970),
                "redirect_uris": (object["redirect_uri"] as? String).map { [$0] } ?? [String](),
                "grant_types": ["client_credentials"], "scopes": ["api:client:v2"],
            ])
    }

    /// `POST /o/client/token` (form `client_id`, `client_secret`, `grant_type=client_credentials`):
    /// `201` with a bearer token.
    func accessToken(_ request: Request) async throws -> Response {
        guard let fields = try await form(request) else { return ReferenceReply.oauth("invalid_request") }
        guard let id = value(fields, "client_id"), let secret = value(fields, "client_secret"), let grant = value(fields, "grant_type") else {
            return ReferenceReply.oauth("invalid_request")
        }
        guard grant == "client_credentials" else { return ReferenceReply.oauth("unsupported_grant_type") }
        guard store.clientSecret(id) == secret else { return ReferenceReply.oauth("invalid_client") }
        let token = store.nextID("at-"), now = Date()
        store.grant(token: token, client: id, expires: now.addingTimeInterval(configuration.accessTokenTTL))
        return ReferenceReply.json(
            201,
            [
                "id": token, "access_token": token, "created_at": ReferenceReply.millis(now),
                "expires_in": Int(configuration.accessTokenTTL), "token_type": "bearer",
            ])
    }

    // MARK: common checks

    /// Bearer token, service provider, and (unless `device` is false) `AP-Device-Identifier` and
    /// `X-Device-Info`.
    func v2Caller(_ request: Request, serviceProvider: String, device: Bool = true) throws(Refusal) -> V2Caller {
        let authorization = header(request, "Authorization") ?? ""
        let token = authorization.lowercased().hasPrefix("bearer ") ? String(authorization.dropFirst(7)) : ""
        guard !token.isEmpty, store.accessTokenValid(token) || configuration.staticAccessTokens.contains(token) else {
            throw Refusal(401, .invalidAccessTokenClientApplication, "the access token is missing, unknown or expired")
        }
        guard let requestor = configuration.requestor(serviceProvider) else {
            throw Refusal(400, .invalidParameterServiceProvider, "the service provider is not configured")
        }
        guard device else { return V2Caller(serviceProvider: requestor, deviceID: "") }
        guard let deviceID = header(request, "AP-Device-Identifier") else {
            throw Refusal(400, .invalidHeaderDeviceIdentifier, "AP-Device-Identifier is missing")
        }
        guard header(request, "X-Device-Info") != nil else {
            throw Refusal(400, .invalidHeaderDeviceInfo, "X-Device-Info is missing")
        }
        return V2Caller(serviceProvider: requestor, deviceID: deviceID)
    }

    // MARK: configuration and profiles

    func v2Configuration(_ request: Request, serviceProvider: String) throws(Refusal) -> Response {
        ReferenceReply.json(200, configurationBody(try v2Caller(request, serviceProvider: serviceProvider, device: false).serviceProvider))
    }

    /// `GET /api/v2/{sp}/profiles[/{mvpd}]`. An `appleSSO` profile is listed only while the
    /// partner status (when sent) still grants access to that provider: once the user signs
    /// out of the TV provider on the device, or revokes access, it is gone.
    func profiles(_ request: Request, serviceProvider: String, mvpd: String?) throws(Refusal) -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        // Read once: whether a partner status was sent, and the MVPD it grants (if any).
        let statusSent = header(request, PartnerFrameworkStatus.headerName) != nil
        let grantedMVPD = statusSent ? (try? partnerMVPD(request, serviceProvider: serviceProvider))?.id : nil
        var profiles: [String: Any] = [:]
        for authentication in store.authentications(requestor: serviceProvider, deviceID: caller.deviceID)
        where mvpd == nil || authentication.mvpd == mvpd {
            if authentication.source == .partner, statusSent, grantedMVPD != authentication.mvpd { continue }
            profiles[authentication.mvpd] = profileObject(authentication)
        }
        return ReferenceReply.json(200, ["profiles": profiles])
    }

    // MARK: sessions

    /// `POST /api/v2/{sp}/sessions/sso/{partner}`: `partner_profile` with the profile request
    /// when partner SSO can proceed, `authorize` when a profile exists, otherwise the basic
    /// authentication fallback (`pfs_fallback` for the partner status, `configuration_fallback`
    /// for an MVPD without partner SSO).
    func partnerSession(_ request: Request, serviceProvider: String, partner: String) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        guard partner.lowercased() == "apple" else {
            return ReferenceReply.error(400, .invalidParameterPartner, "unknown partner \(partner)", for: request)
        }
        let fields = try await form(request) ?? [:]
        let missing = ["domainName", "redirectUrl"].filter { fields[$0]?.decoded.isEmpty ?? true }
        let named = header(request, PartnerFrameworkStatus.headerName).flatMap { try? PartnerFrameworkStatus.decode(header: $0) }
        let verdict = named?.verdict(now: Date())
        var providerID: String?
        switch verdict {
        case .granted(let id)?, .expired(let id)?: providerID = id
        default: providerID = nil
        }
        let mvpd = providerID.flatMap { configuration.mvpd(platformMappingID: $0, of: serviceProvider) }
        if let mvpd, let existing = existingSession(caller, mvpd: mvpd.id) { return existing }
        if case .granted? = verdict, let mvpd, mvpd.supportsPartnerSSO {
            var body = sessionObject(
                "partner_profile", "direct", "none", serviceProvider, mvpd.id,
                url: "/api/v2/\(serviceProvider)/profiles/sso/\(partner)")
            body["authenticationRequest"] =
                [
                    "type": "saml", "request": profileRequest(for: mvpd, requestor: serviceProvider),
                    "attributesNames": mvpd.requiredMetadataFields,
                ] as [String: Any]
            return ReferenceReply.json(200, body)
        }
        let reason: String
        if case .granted? = verdict { reason = "configuration_fallback" } else { reason = "pfs_fallback" }
        return ReferenceReply.json(200, startBasic(caller, mvpd: mvpd?.id, missing: missing, reason: reason))
    }

    /// `POST /api/v2/{sp}/sessions` (`mvpd`, `domainName`, `redirectUrl`) and the resume
    /// `PUT /api/v2/{sp}/sessions/{code}` with what was missing.
    func basicSession(_ request: Request, serviceProvider: String, code: String?) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        let fields = try await form(request) ?? [:]
        var mvpd = value(fields, "mvpd")
        var missing = ["mvpd", "domainName", "redirectUrl"].filter { value(fields, $0) == nil }
        if let code {
            guard let pending = store.pending(code), pending.requestor == serviceProvider, pending.deviceID == caller.deviceID else {
                return ReferenceReply.error(400, .invalidAuthenticationSession, "unknown or expired session code", for: request)
            }
            mvpd = mvpd ?? pending.mvpd
            missing = pending.missingParameters.filter { value(fields, $0) == nil && !($0 == "mvpd" && mvpd != nil) }
        }
        if let mvpd, configuration.mvpd(mvpd, of: serviceProvider) == nil {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the service provider is not integrated with this MVPD", for: request)
        }
        if let code { store.removePending(code) }
        if let mvpd, let existing = existingSession(caller, mvpd: mvpd) { return existing }
        return ReferenceReply.json(200, startBasic(caller, mvpd: mvpd, missing: missing, reason: "none"))
    }

    /// `authorize`/`direct` when the device already has a valid profile for the MVPD.
    func existingSession(_ caller: V2Caller, mvpd: String) -> Response? {
        let sp = caller.serviceProvider.id
        guard let existing = store.authentications(requestor: sp, deviceID: caller.deviceID).first(where: { $0.mvpd == mvpd }) else {
            return nil
        }
        return ReferenceReply.json(
            200,
            sessionObject(
                "authorize", "direct", existing.source == .partner ? "authenticatedSSO" : "authenticated", sp, mvpd,
                url: "/api/v2/\(sp)/decisions/authorize/\(mvpd)"))
    }

    /// A pending second-screen login: `authenticate`/`interactive` with its code and login URL,
    /// or `resume`/`direct` naming what is missing.
    func startBasic(_ caller: V2Caller, mvpd: String?, missing: [String], reason: String) -> [String: Any] {
        let now = Date(), sp = caller.serviceProvider.id
        let login = PendingLogin(
            code: registrationCodeText(), requestor: sp, deviceID: caller.deviceID, mvpd: mvpd, generated: now,
            expires: now.addingTimeInterval(configuration.registrationCodeTTL), missingParameters: missing)
        store.addPending(login)
        var body: [String: Any]
        if missing.isEmpty {
            body = sessionObject("authenticate", "interactive", reason, sp, mvpd, url: "/api/v2/authenticate/\(sp)/\(login.code)")
        } else {
            body = sessionObject("resume", "direct", "missing_parameters_fallback", sp, mvpd, url: "/api/v2/\(sp)/sessions/\(login.code)")
            body["missingParameters"] = missing
        }
        body["code"] = login.code
        body["notBefore"] = String(ReferenceReply.millis(login.generated))
        body["notAfter"] = String(ReferenceReply.millis(login.expires))
        return body
    }

    func sessionObject(_ action: String, _ type: String, _ reason: String, _ serviceProvider: String, _ mvpd: String?, url: String) -> [String: Any] {
        [
            "actionName": action, "actionType": type, "reasonType": reason, "url": url, "sessionId": store.nextID("session-"),
            "mvpd": mvpd ?? NSNull(), "serviceProvider": serviceProvider,
        ]
    }

    // MARK: decisions

    /// `POST /api/v2/{sp}/decisions/{authorize|preauthorize}/{mvpd}` (JSON `resources`): one
    /// decision per resource, `authorized` and `decision` (`Permit`/`Deny`); `authorize` adds
    /// the media `token` to each permitted one.
    func decisions(_ request: Request, serviceProvider: String, kind: String, mvpd: String) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        guard kind == "authorize" || kind == "preauthorize" else {
            return ReferenceReply.error(404, .internalServerError, "unknown decision \(kind)", for: request)
        }
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
            let resources = object["resources"] as? [String], !resources.isEmpty
        else {
            return ReferenceReply.error(400, .invalidParameterResources, "the body must be a JSON object with a non-empty resources array",
                for: request)
        }
        guard let profile = store.authentications(requestor: serviceProvider, deviceID: caller.deviceID).first(where: { $0.mvpd == mvpd }),
            let configured = configuration.mvpd(mvpd, of: serviceProvider)
        else {
            return ReferenceReply.error(403, .authenticatedProfileMissing, "no valid profile for this MVPD on this device", for: request)
        }
        if profile.source == .partner, header(request, PartnerFrameworkStatus.headerName) != nil {
            guard try partnerMVPD(request, serviceProvider: serviceProvider).id == mvpd else {
                throw Refusal(400, .invalidHeaderPFSProviderIDMismatch, "the partner status names another provider")
            }
        }
        let now = Date(), until = now.addingTimeInterval(configuration.authorizationTTL)
        let items: [[String: Any]] = resources.map { resource in
            let permitted = !configured.deniedResources.contains(resource)
            var item: [String: Any] = [
                "resource": resource, "serviceProvider": serviceProvider, "mvpd": mvpd, "source": "mvpd",
                "authorized": permitted, "decision": permitted ? "Permit" : "Deny",
                "notBefore": ReferenceReply.millis(now), "notAfter": ReferenceReply.millis(until),
            ]
            if !permitted {
                item["error"] = ReferenceReply.errorObject(
                    403, kind == "authorize" ? .authorizationDeniedByMVPD : .preauthorizationDeniedByMVPD,
                    "the MVPD denied access to the resource", trace: trace(request))
            } else if kind == "authorize" {
                item["token"] =
                    [
                        "notBefore": ReferenceReply.millis(now), "notAfter": ReferenceReply.millis(until),
                        "serializedToken": MediaToken.serialize(resource: resource, requestor: serviceProvider, mvpd: mvpd, expires: until),
                    ] as [String: Any]
            }
            return item
        }
        return ReferenceReply.json(200, ["decisions": items])
    }

    // MARK: logout

    /// `GET /api/v2/{sp}/logout[/{mvpd}]`: removes the profiles; `partner_logout`/
    /// `partner_interactive` for an `appleSSO` one (the app asks the user to sign out of the TV
    /// provider in the system settings), `logout`/`interactive` with the MVPD's logout URL for a
    /// regular one, `complete`/`none` when there was nothing to end.
    func v2Logout(_ request: Request, serviceProvider: String, mvpd: String?) throws(Refusal) -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        let removed = store.logout(requestor: serviceProvider, deviceID: caller.deviceID, mvpd: mvpd)
        var logouts: [String: Any] = [:]
        for profile in removed {
            var entry: [String: Any] = ["mvpd": profile.mvpd]
            if profile.source == .partner {
                entry["actionName"] = "partner_logout"
                entry["actionType"] = "partner_interactive"
            } else {
                entry["actionName"] = "logout"
                entry["actionType"] = "interactive"
                entry["url"] = "/reference/logout" + (query(request, "redirectUrl").map { "?redirectUrl=" + ReferenceReply.escapeQuery($0) } ?? "")
            }
            logouts[profile.mvpd] = entry
        }
        if let mvpd, logouts.isEmpty {
            logouts[mvpd] = [
                "mvpd": mvpd, "actionName": configuration.mvpd(mvpd, of: serviceProvider) == nil ? "invalid" : "complete",
                "actionType": "none",
            ]
        }
        return ReferenceReply.json(200, ["logouts": logouts])
    }
}
