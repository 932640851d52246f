import Foundation
import Hummingbird

/// What the gateway does with a request, decided on the **canonical** path: percent-escapes
/// decoded, `;parameters` cut from each segment, empty, `.` and `..` segments resolved, lower
/// case. The request is forwarded with its path as received, so whichever way the backend
/// normalizes `/api/v1/tokens/authn/`, `//api/v1/tokens/authn`, `/api/v1/tokens/%61uthn` or
/// `/API/v1/tokens/authn;x`, such a request is still verified here: no spelling of an exchange
/// path gets past the verifier as a plain pass-through.
enum GatewayRoute: Equatable, Sendable {
    case healthz
    case readyz
    case metrics
    /// `POST /api/v1/tokens/authn`.
    case exchangeV1
    /// `POST /api/v2/{sp}/profiles/sso/apple`.
    case exchangeV2
    /// A v2 route that carries `AP-Partner-Framework-Status` (see ``PartnerStatusRoute``).
    case partnerStatus(PartnerStatusRoute)
    /// Everything else: forwarded unchanged.
    case proxy

    static func classify(method: HTTPRequest.Method, path: String) -> GatewayRoute {
        let parts = segments(path)
        switch (method, parts.count) {
        case (.get, 1), (.head, 1):
            if parts[0] == "healthz" { return .healthz }
            if parts[0] == "readyz" { return .readyz }
            if parts[0] == "metrics" && method == .get { return .metrics }
            return .proxy
        case (.post, 4) where parts == ["api", "v1", "tokens", "authn"]:
            return .exchangeV1
        case (.post, 6) where parts[0] == "api" && parts[1] == "v2" && parts[3] == "profiles" && parts[4] == "sso" && parts[5] == "apple":
            return .exchangeV2
        default:
            guard parts.count >= 4, parts[0] == "api", parts[1] == "v2" else { return .proxy }
            switch (method, parts[3], parts.count) {
            case (.post, "sessions", 6) where parts[4] == "sso": return .partnerStatus(.sessionsSSO)
            case (.get, "profiles", 4), (.get, "profiles", 5): return .partnerStatus(.profiles)
            case (.post, "decisions", 6) where parts[4] == "authorize" || parts[4] == "preauthorize": return .partnerStatus(.decisions)
            case (.get, "logout", 4), (.get, "logout", 5): return .partnerStatus(.logout)
            default: return .proxy
            }
        }
    }

    /// The canonical segments of a path (see the type's description). Segments are slices of
    /// the (decoded) path; only one with upper-case letters is copied, to lower-case it — the
    /// usual path costs no string per segment.
    static func segments(_ path: String) -> [Substring] {
        let decoded = path.contains("%") ? (path.removingPercentEncoding ?? path) : path
        var out: [Substring] = []
        for raw in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            var part = raw.prefix { $0 != ";" }
            if !part.utf8.allSatisfy({ $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) {
                part = Substring(part.lowercased())
            }
            switch part {
            case "", ".": continue
            case "..": _ = out.popLast()
            default: out.append(part)
            }
        }
        return out
    }
}
