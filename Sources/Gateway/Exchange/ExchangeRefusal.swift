/// A token exchange refused by its SAML work, with the MVPD it was for once that is known
/// (from the trust store for v1, the partner status for v2), so the refusal is counted per MVPD.
@_spi(Benchmarks) public struct ExchangeRefusal: Error, Sendable {
    public let error: GatewayError
    /// `nil` when the refusal came before an MVPD of the trust store was named.
    public let mvpd: String?
}
