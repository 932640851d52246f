import Foundation
import Hummingbird
import NIOCore
import PartnerStatus
import ServerSupport

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
            try await createSession(request, serviceProvider: context.parameters.get("serviceProvider") ?? "")
        }
        router.post("/api/v2/:serviceProvider/sessions/:code") { request, context in
            try await resumeSession(
                request, serviceProvider: context.parameters.get("serviceProvider") ?? "", code: context.parameters.get("code") ?? "")
        }
        for kind in ["authorize", "preauthorize"] {
            router.post(RouterPath("/api/v2/:serviceProvider/decisions/\(kind)/:mvpd")) { request, context in
                try await decisions(
                    request, serviceProvider: context.parameters.get("serviceProvider") ?? "", kind: kind,
                    mvpd: context.parameters.get("mvpd") ?? "")
            }
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

    /// The checks every v2 call passes, in the backend's order: the bearer token (`401`), the
    /// service provider, then (unless `device` is false: configuration and the resume of a
    /// session, which the documentation lists without it) a well-formed `AP-Device-Identifier`.
    /// `X-Device-Info` is never required: when it is absent the backend uses the values it
    /// extracts from the request, and its documented sample is not even valid JSON.
    func v2Caller(_ request: Request, serviceProvider: String, device: Bool = true) throws(Refusal) -> V2Caller {
        let authorization = header(request, "Authorization") ?? ""
        let token = BearerCredentials.token(in: authorization).map(String.init) ?? ""
        guard !token.isEmpty, store.accessTokenValid(token) || configuration.staticAccessTokens.contains(token) else {
            throw Refusal(401, .invalidAccessTokenClientApplication, "the access token is missing, unknown or expired")
        }
        guard let requestor = configuration.requestor(serviceProvider) else {
            throw Refusal(400, .invalidParameterServiceProvider, "the service provider is not configured")
        }
        guard device else { return V2Caller(serviceProvider: requestor, deviceID: "") }
        guard let deviceID = header(request, DeviceIdentifierHeader.name) else {
            throw Refusal(400, .invalidHeaderDeviceIdentifier, "AP-Device-Identifier is missing")
        }
        guard DeviceIdentifierHeader.isWellFormed(deviceID) else {
            throw Refusal(400, .invalidHeaderDeviceIdentifier, "AP-Device-Identifier must be fingerprint and the base64 of the device id")
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
    /// authentication fallback (`pfs_fallback` for a missing or refusing partner status,
    /// `configuration_fallback` for a provider without partner SSO here), or `resume` with
    /// `missing_parameters_fallback` when the fallback lacks `domainName` or `redirectUrl`.
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
        if let mvpd, let existing = existingSession(serviceProvider, deviceID: caller.deviceID, mvpd: mvpd.id) { return existing }
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
        let body = startBasic(
            serviceProvider, deviceID: caller.deviceID, mvpd: mvpd?.id, missing: missing, reason: reason,
            incomplete: ("resume", "missing_parameters_fallback"))
        return ReferenceReply.json(200, body)
    }

    /// `POST /api/v2/{sp}/sessions` (`mvpd`, `domainName`, `redirectUrl`): `authenticate` with a
    /// code, `resume` naming what is missing, or `authorize` when a profile exists.
    func createSession(_ request: Request, serviceProvider: String) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        let fields = try await form(request) ?? [:]
        let mvpd = value(fields, "mvpd")
        let missing = ["mvpd", "domainName", "redirectUrl"].filter { value(fields, $0) == nil }
        if let mvpd, configuration.mvpd(mvpd, of: serviceProvider) == nil {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the service provider is not integrated with this MVPD", for: request)
        }
        if let mvpd, let existing = existingSession(serviceProvider, deviceID: caller.deviceID, mvpd: mvpd) { return existing }
        let body = startBasic(
            serviceProvider, deviceID: caller.deviceID, mvpd: mvpd, missing: missing, reason: "none", incomplete: ("resume", "none"))
        return ReferenceReply.json(200, body)
    }

    /// `POST /api/v2/{sp}/sessions/{code}` with what the session still lacks: `authenticate`
    /// with a fresh code once nothing is missing, otherwise `retry` with the same code. The
    /// documentation lists no device headers for it (a second application may resume), so the
    /// device is the session's.
    func resumeSession(_ request: Request, serviceProvider: String, code: String) async throws -> Response {
        _ = try v2Caller(request, serviceProvider: serviceProvider, device: false)
        let fields = try await form(request) ?? [:]
        guard let pending = store.pending(code), pending.requestor == serviceProvider else {
            return ReferenceReply.error(400, .invalidAuthenticationSession, "unknown or expired session code", for: request)
        }
        let mvpd = value(fields, "mvpd") ?? pending.mvpd
        let missing = pending.missingParameters.filter { value(fields, $0) == nil && !($0 == "mvpd" && mvpd != nil) }
        if let mvpd, configuration.mvpd(mvpd, of: serviceProvider) == nil {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the service provider is not integrated with this MVPD", for: request)
        }
        if let mvpd, let existing = existingSession(serviceProvider, deviceID: pending.deviceID, mvpd: mvpd) {
            store.removePending(code)
            return existing
        }
        if missing.isEmpty { store.removePending(code) }
        let body = startBasic(
            serviceProvider, deviceID: pending.deviceID, mvpd: mvpd, missing: missing, reason: "none", incomplete: ("retry", "none"),
            keeping: missing.isEmpty ? nil : pending)
        return ReferenceReply.json(200, body)
    }

    /// `authorize`/`direct` when the device already has a valid profile for the MVPD.
    func existingSession(_ serviceProvider: String, deviceID: String, mvpd: String) -> Response? {
        guard let existing = store.authentications(requestor: serviceProvider, deviceID: deviceID).first(where: { $0.mvpd == mvpd }) else {
            return nil
        }
        return ReferenceReply.json(
            200,
            sessionObject(
                "authorize", "direct", existing.source == .partner ? "authenticatedSSO" : "authenticated", serviceProvider, mvpd,
                url: "/api/v2/\(serviceProvider)/decisions/authorize/\(mvpd)"))
    }

    /// A pending second-screen login: `authenticate`/`interactive` with its code and login URL
    /// when nothing is missing; otherwise `incomplete` (`resume` from a new session or the
    /// partner fallback, `retry` from a resume) with `direct`, naming what is missing — on the
    /// same code when `keeping` is the session being resumed. `notBefore`/`notAfter` are
    /// strings of milliseconds, as in the backend's samples.
    func startBasic(
        _ serviceProvider: String, deviceID: String, mvpd: String?, missing: [String], reason: String,
        incomplete: (action: String, reason: String), keeping pending: PendingLogin? = nil
    ) -> [String: Any] {
        let now = Date()
        var login =
            pending
            ?? PendingLogin(
                code: registrationCodeText(), requestor: serviceProvider, deviceID: deviceID, mvpd: mvpd, generated: now,
                expires: now.addingTimeInterval(configuration.registrationCodeTTL))
        login.mvpd = mvpd
        login.missingParameters = missing
        store.addPending(login)
        var body: [String: Any]
        if missing.isEmpty {
            body = sessionObject(
                "authenticate", "interactive", reason, serviceProvider, mvpd, url: "/api/v2/authenticate/\(serviceProvider)/\(login.code)")
        } else {
            body = sessionObject(
                incomplete.action, "direct", incomplete.reason, serviceProvider, mvpd, url: "/api/v2/\(serviceProvider)/sessions/\(login.code)")
            body["missingParameters"] = missing
        }
        body["code"] = login.code
        body["notBefore"] = String(ReferenceReply.millis(login.generated))
        body["notAfter"] = String(ReferenceReply.millis(login.expires))
        return body
    }

    /// The documented session answer; `mvpd` is left out while none is chosen.
    func sessionObject(_ action: String, _ type: String, _ reason: String, _ serviceProvider: String, _ mvpd: String?, url: String) -> [String: Any] {
        var body: [String: Any] = [
            "actionName": action, "actionType": type, "reasonType": reason, "url": url, "sessionId": store.nextID("session-"),
            "serviceProvider": serviceProvider,
        ]
        if let mvpd { body["mvpd"] = mvpd }
        return body
    }

    // MARK: decisions

    /// `POST /api/v2/{sp}/decisions/{authorize|preauthorize}/{mvpd}` (JSON `resources`): one
    /// decision per resource, `authorized` and `decision` (`Permit`/`Deny`); `authorize` adds
    /// the media `token` to each permitted one.
    func decisions(_ request: Request, serviceProvider: String, kind: String, mvpd: String) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        guard let configured = configuration.mvpd(mvpd, of: serviceProvider) else {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the service provider is not integrated with this MVPD", for: request)
        }
        var request = request
        let body = try await request.collectBody(upTo: Self.bodyLimit)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
            let resources = object["resources"] as? [String], !resources.isEmpty
        else {
            return ReferenceReply.error(
                400, .invalidParameterResources, "the body must be a JSON object with a non-empty resources array",
                for: request)
        }
        guard let profile = store.authentications(requestor: serviceProvider, deviceID: caller.deviceID).first(where: { $0.mvpd == mvpd }) else {
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
    /// regular one, `invalid`/`none` when no valid profile was found (the documented answer;
    /// `complete` is for MVPDs without a logout endpoint, which the reference has none of).
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
            logouts[mvpd] = ["mvpd": mvpd, "actionName": "invalid", "actionType": "none"]
        }
        return ReferenceReply.json(200, ["logouts": logouts])
    }
}

// MARK: - The caller

/// A REST API v2 call that passed the backend's common checks: a bearer access token it issued
/// (or one of the configuration's static tokens), a known service provider, the device
/// headers.
struct V2Caller: Sendable {
    var serviceProvider: ReferenceRequestor
    /// The `AP-Device-Identifier` value as sent (`fingerprint <base64>`).
    var deviceID: String
}
