import Foundation
import Hummingbird
import ServerSupport

/// REST API v1 as the Apple SSO cookbook walks it: check authentication, configuration,
/// profile request, retrieve token, authorize, short media token, user metadata, logout.
/// `requestor` and `deviceId` come from the query on every call.
extension ReferenceRoutes {
    func addV1(to router: Router<BasicRequestContext>) {
        router.get("/api/v1/checkauthn") { request, _ in try checkAuthentication(request) }
        router.get("/api/v1/config/:requestor") { request, context in
            v1Configuration(request, requestor: context.parameters.get("requestor") ?? "")
        }
        router.get("/api/v1/:requestor/profile-requests/:mvpd") { request, context in
            v1ProfileRequest(request, requestor: context.parameters.get("requestor") ?? "", mvpd: context.parameters.get("mvpd") ?? "")
        }
        router.get("/api/v1/tokens/authn") { request, _ in try retrieveToken(request) }
        router.get("/api/v1/authorize") { request, _ in try v1Authorize(request, mediaToken: false) }
        router.get("/api/v1/mediatoken") { request, _ in try v1Authorize(request, mediaToken: true) }
        router.get("/api/v1/tokens/media") { request, _ in try v1Authorize(request, mediaToken: true) }
        router.get("/api/v1/tokens/usermetadata") { request, _ in try userMetadata(request) }
        router.delete("/api/v1/logout") { request, _ in v1Logout(request) }
    }

    /// The requestor and device of a v1 call and the device's newest authentication, or the
    /// error to answer (`absentStatus` when there is no valid token: 403, or 404 on the routes
    /// that look a token up).
    func v1Session(_ request: Request, absentStatus: Int = 403, absentPrefix: String = "") throws(Refusal) -> ReferenceAuthentication {
        guard let requestor = query(request, "requestor") else {
            throw Refusal(400, .invalidRequestor, "the required parameter requestor is missing")
        }
        guard let device = query(request, "deviceId") else {
            throw Refusal(400, .invalidDeviceID, "the required parameter deviceId is missing")
        }
        guard configuration.requestor(requestor) != nil else {
            throw Refusal(400, .invalidRequestor, "the requestor is not configured")
        }
        guard let authentication = store.authentications(requestor: requestor, deviceID: device).first else {
            throw Refusal(absentStatus, .authenticationSessionMissing, absentPrefix + "no valid authentication token for this requestor and device")
        }
        return authentication
    }

    /// `GET /api/v1/checkauthn`: `200` (empty) with a valid token, `403` without.
    func checkAuthentication(_ request: Request) throws(Refusal) -> Response {
        _ = try v1Session(request)
        return ReferenceReply.empty(200)
    }

    /// `GET /api/v1/config/{requestor}`: the MVPDs with their platform SSO properties.
    func v1Configuration(_ request: Request, requestor id: String) -> Response {
        guard let requestor = configuration.requestor(id) else { return unknownRequestor(request) }
        return ReferenceReply.json(200, configurationBody(requestor))
    }

    /// `GET /api/v1/{requestor}/profile-requests/{mvpd}?deviceType=iOS|tvOS`: the opaque
    /// `verificationToken` for VSA (`application/octet-stream`).
    func v1ProfileRequest(_ request: Request, requestor: String, mvpd id: String) -> Response {
        guard configuration.requestor(requestor) != nil else { return unknownRequestor(request) }
        guard let deviceType = query(request, "deviceType") else { return missing("deviceType", request) }
        guard Self.deviceTypes.contains(deviceType) else {
            return ReferenceReply.error(400, .invalidDeviceInfo, "deviceType must be iOS or tvOS", for: request)
        }
        guard let mvpd = configuration.mvpd(id, of: requestor), mvpd.enablePlatformServices else { return notIntegrated(request) }
        return ReferenceReply.body(200, "application/octet-stream", Array(profileRequest(for: mvpd, requestor: requestor).utf8))
    }

    /// `GET /api/v1/tokens/authn`: the token (`requestor`, `mvpd`, `userId`, `expires`), or `404`
    /// while the second-screen login has not happened.
    func retrieveToken(_ request: Request) throws(Refusal) -> Response {
        let token = try v1Session(request, absentStatus: 404)
        return ReferenceReply.json(
            200,
            [
                "requestor": token.requestor, "mvpd": token.mvpd, "userId": token.userID,
                "expires": String(ReferenceReply.millis(token.notAfter)), "tokenSource": token.tokenSource,
            ])
    }

    /// `GET /api/v1/authorize` (`403 authorization_denied_by_mvpd` for a resource the MVPD
    /// denies) and the short media token endpoints.
    func v1Authorize(_ request: Request, mediaToken: Bool) throws(Refusal) -> Response {
        let token = try v1Session(request)
        guard let resource = query(request, "resource") else {
            return ReferenceReply.error(400, .missingResource, "the required parameter resource is missing", for: request)
        }
        if configuration.mvpd(token.mvpd)?.deniedResources.contains(resource) ?? false {
            return ReferenceReply.error(403, .authorizationDeniedByMVPD, "the MVPD denied access to the resource", for: request)
        }
        let expires = Date().addingTimeInterval(configuration.authorizationTTL)
        store.authorize(requestor: token.requestor, deviceID: token.deviceID, resource: resource, until: expires)
        var body: [String: Any] = [
            "requestor": token.requestor, "resource": resource, "expires": String(ReferenceReply.millis(expires)),
        ]
        if mediaToken {
            body["serializedToken"] = MediaToken.serialize(resource: resource, requestor: token.requestor, mvpd: token.mvpd, expires: expires)
            body["userId"] = token.userID
            body["mvpdId"] = token.mvpd
        } else {
            body["mvpd"] = token.mvpd
        }
        return ReferenceReply.json(200, body)
    }

    /// `GET /api/v1/tokens/usermetadata`: `updated`, `encrypted`, `data` — with `tokenSource`
    /// (`Apple` after a partner exchange, the MVPD after a second-screen login). The backend's
    /// documents do not say whether `tokenSource` sits in `data` or beside it; it is in both.
    func userMetadata(_ request: Request) throws(Refusal) -> Response {
        let token = try v1Session(request, absentStatus: 404, absentPrefix: "no metadata: ")
        return ReferenceReply.json(
            200,
            [
                "updated": ReferenceReply.millis(token.notBefore), "encrypted": [String](), "tokenSource": token.tokenSource,
                "data": ["userID": token.userID, "tokenSource": token.tokenSource, "mvpd": token.mvpd],
            ])
    }

    /// `DELETE /api/v1/logout`: `204`, whether or not there was a token.
    func v1Logout(_ request: Request) -> Response {
        guard let requestor = query(request, "requestor") else { return missing("requestor", request) }
        guard let device = query(request, "deviceId") else { return missing("deviceId", request) }
        _ = store.logout(requestor: requestor, deviceID: device)
        return ReferenceReply.empty(204)
    }
}
