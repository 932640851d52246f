import NIOHTTP1

/// What the gateway does with a request, decided on the canonical path of its
/// ``RequestTarget`` (case-insensitively, ignoring one trailing `/`), which is also exactly the
/// path forwarded: no spelling of an exchange path reaches the backend as a pass-through.
///
/// The request's way: `GatewayConnectionHandler` parses the head's target, classifies it
/// (``classify(method:path:)``), keeps the route with the request in flight and hands it to
/// ``GatewayResponder``, which answers it locally (health, readiness, metrics, refusals), admits
/// an exchange (``ExchangeFlow``), or streams it to the backend (``UpstreamRequestHead/passThrough(_:target:peer:core:)``); the same route
/// names it in the metrics and the log (``label``).
enum GatewayRoute: Equatable, Sendable {
    case healthz
    case readyz
    case metrics
    /// `POST /api/v1/tokens/authn`.
    case exchangeV1
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`.
    case exchangeV2
    /// `GET`/`HEAD /api/v1/tokens/authn`: the backend's token check, passed through — without a
    /// body (a backend that reads one would see an exchange the gateway never verified).
    case tokenCheck
    /// An exchange path with a method the backend does not serve there: refused (`405`), never
    /// forwarded, so a backend that routes by path alone cannot be reached unverified. `GET` and
    /// `HEAD` on the v1 path are the backend's "check authentication token" and pass through.
    case exchangeMethodNotAllowed(allow: String)
    /// A v2 route that carries `AP-Partner-Framework-Status` (see ``PartnerStatusRoute``).
    case partnerStatus(PartnerStatusRoute)
    /// Everything else: forwarded unchanged.
    case proxy
    /// Refused: a request target or `Host` the gateway does not take, or a path below or beside
    /// an exchange path that no backend route has (see ``classify(method:path:)``).
    case invalidTarget

    /// The `route` label of the request metrics and log lines — the one place the names live.
    var label: String {
        switch self {
        case .healthz: "healthz"
        case .readyz: "readyz"
        case .metrics: "metrics"
        case .exchangeV1: "v1_tokens_authn"
        case .exchangeV2: "v2_profiles_sso"
        case .tokenCheck: "v1_token_check"
        case .exchangeMethodNotAllowed: "exchange_method"
        case .partnerStatus(let route): route.label
        case .proxy: "proxy"
        case .invalidTarget: "invalid_target"
        }
    }

    /// The label of a request refused before it could be routed (a transfer coding other than
    /// `chunked`): it has no route.
    static let unroutedLabel = "invalid_request"

    /// The label of a head that did not arrive whole within `header-timeout`: no request to route.
    static let headerTimeoutLabel = "header_timeout"

    /// The gateway's own operational endpoints: counted, but not logged one line per request.
    var isOperational: Bool {
        switch self {
        case .healthz, .readyz, .metrics: true
        default: false
        }
    }

    /// Whether a request line names an operational endpoint in its plain spelling, read before
    /// the target is parsed: such requests (probes, scrapes, every few seconds) get no span.
    /// Another spelling that ``classify(method:path:)`` also routes there is merely traced.
    static func isPlainOperational(uri: String) -> Bool {
        let path = uri.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(uri[..<$0]) } ?? uri
        return path == "/healthz" || path == "/readyz" || path == "/metrics"
    }

    /// Look-alikes of an exchange path are never passed through: backends that match a format
    /// or another suffix (Rails' `authn.json`, Spring's suffix patterns, `;` matrix parameters,
    /// `:` custom methods) route `authn.json`, `authn~` or `authn%3Ax` to the exchange's handler.
    /// A last segment that is `authn` followed by anything but a letter, digit, `-` or `_` is the
    /// v1 exchange path (verified on `POST`, a token check on `GET`/`HEAD`); more segments after
    /// either exchange path, or a look-alike of its `profiles`/`sso` segments, are
    /// ``invalidTarget`` (`400 invalid_request_target`): no route of the backend is spelled so.
    static func classify(method: HTTPMethod, path: String) -> GatewayRoute {
        let parts = segments(path)
        if parts.count >= 4, parts[0] == "api", parts[1] == "v1", parts[2] == "tokens", looksLike(parts[3], "authn") {
            guard parts.count == 4 else { return .invalidTarget }
            switch method {
            case .POST: return .exchangeV1
            case .GET, .HEAD: return .tokenCheck
            default: return .exchangeMethodNotAllowed(allow: "GET, HEAD, POST")
            }
        }
        if parts.count >= 6, parts[0] == "api", parts[1] == "v2", looksLike(parts[3], "profiles"), looksLike(parts[4], "sso") {
            guard parts.count == 6, parts[3] == "profiles", parts[4] == "sso" else { return .invalidTarget }
            return method == .POST ? .exchangeV2 : .exchangeMethodNotAllowed(allow: "POST")
        }
        switch parts.count {
        case 1 where method == .GET || method == .HEAD:
            if parts[0] == "healthz" { return .healthz }
            if parts[0] == "readyz" { return .readyz }
            if parts[0] == "metrics" && method == .GET { return .metrics }
            return .proxy
        default:
            guard parts.count >= 4, parts[0] == "api", parts[1] == "v2" else { return .proxy }
            switch (method, parts[3], parts.count) {
            case (.POST, "sessions", 6) where parts[4] == "sso": return .partnerStatus(.sessionsSSO)
            case (.GET, "profiles", 4), (.GET, "profiles", 5): return .partnerStatus(.profiles)
            case (.POST, "decisions", 6) where parts[4] == "authorize" || parts[4] == "preauthorize": return .partnerStatus(.decisions)
            case (.GET, "logout", 4), (.GET, "logout", 5): return .partnerStatus(.logout)
            default: return .proxy
            }
        }
    }

    /// `segment` is `name`, or `name` followed by a byte that is not a letter, digit, `-` or `_`
    /// (`.json`, `~`, `:x`, an escape such as `%3A`): a spelling some backend routes as `name`.
    static func looksLike(_ segment: Substring, _ name: String) -> Bool {
        guard segment.utf8.starts(with: name.utf8) else { return false }
        guard let next = segment.utf8.dropFirst(name.utf8.count).first else { return true }
        switch next {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): return false
        default: return true
        }
    }

    /// The lower-cased segments of a canonical path (``RequestTarget/path``: no escapes, no
    /// empty or dot segments but a trailing `/`). Segments are slices of the path; only one with
    /// upper-case letters is copied, to lower-case it. One pass over the bytes into one array:
    /// every request is routed. Split on the byte `/`, which for a canonical path (ASCII only)
    /// is the split on the character.
    static func segments(_ path: String) -> [Substring] {
        var parts: [Substring] = []
        parts.reserveCapacity(8)
        let bytes = path.utf8
        var start = bytes.startIndex
        var upper = false
        var index = start
        func close() {
            guard start != index else { return }
            let part = path[start..<index]
            parts.append(upper ? Substring(part.lowercased()) : part)
        }
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") {
                close()
                start = bytes.index(after: index)
                upper = false
            } else if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) {
                upper = true
            }
            index = bytes.index(after: index)
        }
        close()
        return parts
    }
}

/// The REST API v2 routes, besides the token exchange, that carry `AP-Partner-Framework-Status`.
/// On each the gateway reads the header and counts its verdict in
/// `samlgate_partner_status_total{route,verdict}`, and forwards the request whatever it says —
/// what the backend documents for these routes:
///
/// - `POST /api/v2/{sp}/sessions/sso/{partner}`: a missing, unreadable or refusing status is
///   answered by the backend with its basic-authentication fallback (`pfs_fallback`);
/// - `GET /api/v2/{sp}/profiles[/{mvpd}]`: the backend leaves an `appleSSO` profile out when the
///   status does not grant access;
/// - `POST /api/v2/{sp}/decisions/{authorize,preauthorize}/{mvpd}`: only the backend knows whether
///   the profile is `appleSSO` (it then refuses a refusing status, `invalid_header_pfs_*`) or
///   regular (the status does not matter);
/// - `GET /api/v2/{sp}/logout[/{mvpd}]`: a logout is never refused.
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
