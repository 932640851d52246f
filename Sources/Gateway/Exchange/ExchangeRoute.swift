/// Which token-exchange route a request came in on; decides the required fields and how the
/// MVPD is named.
public enum ExchangeRoute: Sendable {
    /// `POST /api/v1/tokens/authn`: the MVPD is the form field `mvpd`.
    case v1
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`: the MVPD comes from the partner status header.
    case v2(mvpd: String)

    static let v1Label = "v1_tokens_authn"
    static let v2Label = "v2_profiles_sso"

    /// The `route` label of the request metrics.
    var label: String {
        switch self {
        case .v1: return Self.v1Label
        case .v2: return Self.v2Label
        }
    }
}
