import SAMLVerification
import TestIdP

/// Signed responses of the benchmark sizes for one key algorithm, and a verifier trusting the key.
struct VerificationFixture {
    static let mvpd = "BenchMVPD"
    static let sizes = [("3KB", 3 * 1024), ("8KB", 8 * 1024), ("64KB", 64 * 1024)]

    var documents: [(String, [UInt8])]
    var verifier: Verifier
    /// The same verifier with libxml2 canonicalizing (the straightforward xmlsec path): the baseline.
    var libxml2Verifier: Verifier

    /// A response shaped like the real IdPs' in the test corpus rather than padded to a size: a
    /// signed assertion with a few attributes, indented, its certificate in `KeyInfo` (~4–5 KB).
    static var realisticOptions: IssueOptions {
        var options = IssueOptions(
            mvpd: mvpd, user: "d6c7f4e2-5b1a-4c2e-9f3a-7b8e1c0a2d4f",
            attributes: [
                SAMLAttribute("upstreamUserID", "8f14e45fceea167a5a36dedd4bea2543"), SAMLAttribute("householdID", "hh-20931"),
                SAMLAttribute("zip", "10001"), SAMLAttribute(name: "channelID", values: ["tv-basic", "tv-sports"]),
            ])
        options.ttl = 10 * 365 * 86_400
        options.pretty = true
        return options
    }

    static func make(_ algorithm: KeyAlgorithm) -> VerificationFixture {
        let pair = try! IdPKeyPair.generate(algorithm)
        let idp = try! TestIdentityProvider(keyPair: pair)
        let documents =
            sizes.map { name, size -> (String, [UInt8]) in
                var options = IssueOptions(mvpd: mvpd, user: "bench-user@example.com", attributes: [SAMLAttribute("userID", "u-1")])
                options.ttl = 10 * 365 * 86_400  // valid for the whole run
                options.padToSize = size
                return (name, try! idp.issue(options))
            } + [("realistic", try! idp.issue(realisticOptions))]
        let store = TrustStore(providers: [try! IdentityProviderTrust(mvpd: mvpd, certificatesPEM: [pair.certificatePEM])])
        // No replay cache: the same document is verified again and again.
        var libxml2 = VerificationOptions()
        libxml2.nativeCanonicalization = false
        return VerificationFixture(
            documents: documents, verifier: Verifier(trustStore: store, replayCache: nil),
            libxml2Verifier: Verifier(trustStore: store, options: libxml2, replayCache: nil))
    }
}
