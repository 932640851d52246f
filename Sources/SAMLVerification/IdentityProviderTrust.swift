/// What is trusted for one MVPD: its IdP keys (several during a rotation) and, optionally,
/// the issuer its assertions must name.
public struct IdentityProviderTrust: Sendable {
    public let mvpd: String
    /// Tried in order; any one verifying the signature is enough.
    public let keys: [TrustedKey]
    /// When set, the Assertion's `Issuer` must equal it (`issuer_mismatch`).
    public let issuer: String?
    /// The id Apple's VSA framework reports for this provider (`frameworkProviderInfo.id`);
    /// the MVPD id unless configured otherwise.
    public let platformMappingID: String

    public init(mvpd: String, keys: [TrustedKey], issuer: String? = nil, platformMappingID: String? = nil) {
        self.mvpd = mvpd
        self.keys = keys
        self.issuer = issuer
        self.platformMappingID = platformMappingID ?? mvpd
    }

    /// Loads each PEM (certificate or public key) into a key value.
    public init(mvpd: String, certificatesPEM: [String], issuer: String? = nil) throws(TrustStoreError) {
        var keys: [TrustedKey] = []
        for (index, pem) in certificatesPEM.enumerated() {
            keys.append(try TrustedKey(pem: pem, source: "\(mvpd)#\(index)"))
        }
        self.init(mvpd: mvpd, keys: keys, issuer: issuer)
    }
}
