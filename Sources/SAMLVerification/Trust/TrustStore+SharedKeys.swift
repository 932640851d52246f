extension TrustStore {
    /// Refuses a key trusted for several MVPDs unless each of them has an issuer binding (an
    /// `issuer` file, or the `entityID` of its metadata).
    ///
    /// Without one, a response that one MVPD's IdP signed verifies for every MVPD sharing its
    /// key, so a client naming another MVPD is believed: the issuer binding is what tells the
    /// MVPDs apart. One IdP serving several MVPD ids stays possible — give each entry an `issuer`
    /// file (the same one if its responses carry the same Issuer). `providers` are checked in
    /// order; the error names the first unbound MVPD's key files and the fix.
    static func refuseUnboundSharedKeys(_ providers: [IdentityProviderTrust]) throws(TrustStoreError) {
        var holders: [String: [(mvpd: String, source: String, bound: Bool)]] = [:]
        var order: [String] = []
        for provider in providers {
            var seen: Set<String> = []
            for key in provider.keys where seen.insert(key.fingerprint).inserted {
                if holders[key.fingerprint] == nil { order.append(key.fingerprint) }
                holders[key.fingerprint, default: []].append((provider.mvpd, key.source, provider.issuer != nil))
            }
        }
        for fingerprint in order {
            guard let list = holders[fingerprint], list.count > 1, list.contains(where: { !$0.bound }) else { continue }
            let unbound = list.filter { !$0.bound }.map(\.mvpd)
            throw TrustStoreError(
                "the key \(fingerprint.prefix(8)) (\(list.map(\.source).joined(separator: ", "))) is trusted for the MVPDs "
                    + "\(list.map(\.mvpd).joined(separator: ", ")) and \(unbound.joined(separator: ", ")) has no issuer binding: "
                    + "add an issuer file (\(unbound.map { "\($0)/issuer" }.joined(separator: ", "))) naming the Issuer its responses carry, "
                    + "so that a response for one MVPD cannot be accepted as another's")
        }
    }
}
