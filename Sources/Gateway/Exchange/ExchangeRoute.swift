/// Which token-exchange route a request came in on, with what the route says about the MVPD;
/// decides the required fields. (Its name in metrics and logs is ``GatewayRoute/label``.)
@_spi(Benchmarks) public enum ExchangeRoute: Sendable {
    /// `POST /api/v1/tokens/authn`: the MVPD is the form field `mvpd`.
    case v1
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`: the MVPD comes from the partner status header.
    case v2(mvpd: String)
}
