/// The REST API v2 routes, besides the token exchange, that carry `AP-Partner-Framework-Status`.
/// On each the gateway reads the header and counts its verdict in
/// `samlgate_partner_status_total{route,verdict}`, and forwards the request whatever it says —
/// what the backend documents for these routes:
///
/// | route | why the request goes on |
/// |---|---|
/// | `POST /api/v2/{sp}/sessions/sso/{partner}` | a missing, unreadable or refusing status is answered by the backend with its basic-authentication fallback (`pfs_fallback`) |
/// | `GET /api/v2/{sp}/profiles[/{mvpd}]` | the backend leaves an `appleSSO` profile out when the status no longer grants access |
/// | `POST /api/v2/{sp}/decisions/{authorize,preauthorize}/{mvpd}` | only the backend knows whether the profile is `appleSSO` (it then refuses a refusing status, `invalid_header_pfs_*`) or regular (the status does not matter) |
/// | `GET /api/v2/{sp}/logout[/{mvpd}]` | a logout is never refused |
///
/// The exchange itself (`POST /api/v2/{sp}/profiles/sso/apple`) enforces the status with the
/// SDK's codes (see ``PartnerStatusHeader``).
enum PartnerStatusRoute: String, Sendable {
    case sessionsSSO = "v2_sessions_sso"
    case profiles = "v2_profiles"
    case decisions = "v2_decisions"
    case logout = "v2_logout"

    /// The metrics label of the route.
    var label: String { rawValue }
}
