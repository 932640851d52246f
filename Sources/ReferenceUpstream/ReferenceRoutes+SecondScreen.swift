import Foundation
import Hummingbird
import ServerSupport

/// The fallback when partner SSO is not possible: a code shown on the device (v1 registration
/// code, v2 basic-authentication session), the MVPD login on a second screen (here a plain
/// form the reference upstream serves), and the device polling for its token or profile.
extension ReferenceRoutes {
    func addSecondScreen(to router: Router<BasicRequestContext>) {
        router.post("/reggie/v1/:requestor/regcode") { request, context in
            try await createRegistrationCode(request, requestor: context.parameters.get("requestor") ?? "")
        }
        router.get("/reggie/v1/:requestor/regcode/:code") { request, context in
            registrationCode(request, code: context.parameters.get("code") ?? "")
        }
        router.get("/api/v1/authenticate") { request, _ in initiateAuthentication(request) }
        router.get("/api/v2/authenticate/:serviceProvider/:code") { request, context in
            let code = context.parameters.get("code") ?? ""
            // Opened in a browser: the documented error is a bare `400` page, not a JSON body.
            guard store.pending(code) != nil else {
                return ReferenceReply.html(400, "<!doctype html><title>Sign in</title><p>Unknown or expired code.</p>")
            }
            return ReferenceReply.redirect("/reference/login?code=" + ReferenceReply.escapeQuery(code))
        }
        router.get("/reference/login") { request, _ in loginPage(request) }
        router.post("/reference/login") { request, _ in try await login(request) }
    }

    /// `POST /reggie/v1/{requestor}/regcode` (`deviceId`, optional `mvpd`, `ttl` ≤ 36000 s; query
    /// or form): `201` with the code.
    func createRegistrationCode(_ request: Request, requestor: String) async throws -> Response {
        let fields = try await form(request) ?? [:]
        func value(_ name: String) -> String? { query(request, name) ?? self.value(fields, name) }
        guard configuration.requestor(requestor) != nil else { return unknownRequestor(request) }
        guard let device = value("deviceId") else { return missing("deviceId", request) }
        let mvpd = value("mvpd")
        if let mvpd, configuration.mvpd(mvpd, of: requestor) == nil {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the requestor is not integrated with this MVPD", for: request)
        }
        var ttl = configuration.registrationCodeTTL
        if let text = value("ttl") {
            guard let seconds = Double(text), seconds > 0, seconds <= 36_000 else {
                return ReferenceReply.error(400, .internalError, "ttl must be 1...36000 seconds", for: request)
            }
            ttl = seconds
        }
        let now = Date()
        let login = PendingLogin(
            code: registrationCodeText(), requestor: requestor, deviceID: device, mvpd: mvpd,
            generated: now, expires: now.addingTimeInterval(ttl))
        store.addPending(login)
        return ReferenceReply.json(201, registrationCodeObject(login, request: request))
    }

    func registrationCode(_ request: Request, code: String) -> Response {
        guard let login = store.pending(code) else {
            return ReferenceReply.error(404, .invalidParameterCode, "unknown or expired registration code", for: request)
        }
        return ReferenceReply.json(200, registrationCodeObject(login, request: request))
    }

    func registrationCodeObject(_ login: PendingLogin, request: Request) -> [String: Any] {
        [
            "id": "rc-" + login.code, "code": login.code, "requestor": login.requestor, "mvpd": login.mvpd ?? NSNull(),
            "generated": ReferenceReply.millis(login.generated), "expires": ReferenceReply.millis(login.expires),
            "info": [
                "deviceId": login.deviceID, "deviceInfo": header(request, "X-Device-Info") ?? NSNull(),
                "authorizationType": "OAUTH2",
            ] as [String: Any],
        ]
    }

    /// Seven characters, like the backend's codes, from the deterministic counter.
    func registrationCodeText() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var n = store.nextNumber() * 7_919 + 104_729
        var code = ""
        for _ in 0..<7 {
            code.append(alphabet[n % alphabet.count])
            n /= alphabet.count
        }
        return String(code.reversed())
    }

    /// `GET /api/v1/authenticate?requestor_id&mso_id&reg_code&…`: `302` to the MVPD login.
    func initiateAuthentication(_ request: Request) -> Response {
        // The backend's code for each: the registration code, the requestor, the MVPD.
        let codes: [(String, BackendErrorCode)] = [
            ("reg_code", .invalidParameterCode), ("requestor_id", .invalidRequestor), ("mso_id", .invalidParameterMVPD),
        ]
        for (name, code) in codes where query(request, name) == nil {
            return ReferenceReply.error(400, code, "the required parameter \(name) is missing", for: request)
        }
        let code = query(request, "reg_code")!, mvpd = query(request, "mso_id")!
        guard let login = store.pending(code), login.requestor == query(request, "requestor_id") else {
            return ReferenceReply.error(400, .invalidParameterCode, "unknown or expired registration code", for: request)
        }
        guard configuration.mvpd(mvpd, of: login.requestor) != nil else {
            return ReferenceReply.error(400, .invalidParameterMVPD, "the requestor is not integrated with this MVPD", for: request)
        }
        var updated = login
        updated.mvpd = mvpd
        store.addPending(updated)
        return ReferenceReply.redirect("/reference/login?code=" + ReferenceReply.escapeQuery(code))
    }

    /// The MVPD's login page (a stand-in): a user name, and the MVPD when none was chosen.
    func loginPage(_ request: Request) -> Response {
        guard let code = query(request, "code"), let login = store.pending(code) else {
            return ReferenceReply.html(400, "<!doctype html><title>Sign in</title><p>Unknown or expired code.</p>")
        }
        let choices = configuration.requestor(login.requestor)?.mvpds ?? []
        let mvpdField =
            login.mvpd.map { "<input type=hidden name=mvpd value=\"\(ReferenceReply.escapeHTML($0))\">" }
            ?? "<select name=mvpd>" + choices.map { "<option>\(ReferenceReply.escapeHTML($0))</option>" }.joined() + "</select>"
        return ReferenceReply.html(
            200,
            """
            <!doctype html><title>Sign in to your TV provider</title>
            <form method=post action="/reference/login">
            <input type=hidden name=code value="\(ReferenceReply.escapeHTML(code))">\(mvpdField)
            <label>User <input name=user autofocus></label> <button>Sign in</button></form>
            """)
    }

    /// `POST /reference/login` (`code`, `user`, `mvpd` when not chosen before): completes the
    /// pending login with an authentication of source `basic`.
    func login(_ request: Request) async throws -> Response {
        guard let fields = try await form(request) else { return ReferenceReply.html(400, "<p>Broken form.</p>") }
        let code = fields["code"].map { text($0.decoded) } ?? "", user = fields["user"].map { text($0.decoded) } ?? ""
        guard let login = store.pending(code) else { return ReferenceReply.html(400, "<p>Unknown or expired code.</p>") }
        guard let mvpd = login.mvpd ?? fields["mvpd"].map({ text($0.decoded) }), configuration.mvpd(mvpd, of: login.requestor) != nil,
            !user.isEmpty
        else {
            return ReferenceReply.html(400, "<p>Choose a provider and enter a user name.</p>")
        }
        let now = Date()
        store.authenticate(
            ReferenceAuthentication(
                requestor: login.requestor, deviceID: login.deviceID, mvpd: mvpd, source: .basic,
                userID: SAMLSubject.userID(name: Array(user.utf8)), notBefore: now,
                notAfter: now.addingTimeInterval(configuration.authenticationTTL)))
        store.removePending(code)
        return ReferenceReply.html(200, "<!doctype html><title>Signed in</title><p>You are signed in. Return to your device.</p>")
    }
}
