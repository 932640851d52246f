/// What the test IdP puts into `ds:KeyInfo`. The verifier never trusts any of it; the
/// styles exist so tests can show that an embedded attacker key changes nothing.
public enum KeyInfoStyle: String, Sendable, CaseIterable {
    /// `X509Data/X509Certificate` with the signing certificate (what IdPs usually send).
    case x509Certificate
    /// `KeyValue` with the raw public key, written by xmlsec.
    case keyValue
    /// No `KeyInfo` at all.
    case none
}
