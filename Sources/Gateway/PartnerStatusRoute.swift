import Hummingbird

/// The REST API v2 routes that carry `AP-Partner-Framework-Status`, and what the gateway does
/// with the header on each — what the backend documents for that route:
///
/// | route | policy |
/// |---|---|
/// | `POST /api/v2/{sp}/profiles/sso/apple` | ``Policy/enforce``: the token exchange; the SDK's codes (`VSA403`, `VSA404`, `VSA503`, `APPL_ERROR`) — handled by the exchange itself |
/// | `POST /api/v2/{sp}/sessions/sso/apple` | ``Policy/observe``: the backend answers a missing, invalid or refusing status with its basic-authentication fallback (`pfs_fallback`), so the request goes on |
/// | `GET /api/v2/{sp}/profiles[/{mvpd}]` | ``Policy/observe``: the backend leaves `appleSSO` profiles out when the status no longer grants access |
/// | `POST /api/v2/{sp}/decisions/{authorize,preauthorize}/{mvpd}` | ``Policy/enforce`` when sent: the header accompanies an `appleSSO` profile, and a revoked permission must not yield a decision |
/// | `GET /api/v2/{sp}/logout[/{mvpd}]` | ``Policy/observe``: a logout is never refused |
///
/// Every status seen is counted in `samlgate_partner_status_total{route,verdict}`.
enum PartnerStatusRoute: String, Sendable {
    case sessionsSSO = "v2_sessions_sso"
    case profiles = "v2_profiles"
    case decisions = "v2_decisions"
    case logout = "v2_logout"

    enum Policy {
        /// Refuse with the SDK's code when the status does not grant access.
        case enforce
        /// Count it and forward the request whatever it says.
        case observe
    }

    var policy: Policy { self == .decisions ? .enforce : .observe }

    /// The metrics label of the route.
    var label: String { rawValue }

    /// `/api/v2/{sp}/…` routes other than the token exchange.
    static func classify(method: HTTPRequest.Method, path: String) -> PartnerStatusRoute? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 5, parts[0].isEmpty, parts[1] == "api", parts[2] == "v2", !parts[3].isEmpty else { return nil }
        switch (method, parts[4], parts.count) {
        case (.post, "sessions", 7) where parts[5] == "sso" && !parts[6].isEmpty: return .sessionsSSO
        case (.get, "profiles", 5), (.get, "profiles", 6): return .profiles
        case (.post, "decisions", 7) where parts[5] == "authorize" || parts[5] == "preauthorize": return .decisions
        case (.get, "logout", 5), (.get, "logout", 6): return .logout
        default: return nil
        }
    }
}
