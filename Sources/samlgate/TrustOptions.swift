import ArgumentParser
import Foundation
import SAMLVerification

/// The trust and verification options `verify` and `batch` share: where the IdP keys come from
/// and the rules the verifier applies.
struct TrustOptions: ParsableArguments {
    @Option(name: .customLong("trust"), help: "A trusted IdP certificate or public key (PEM). Repeatable.")
    var trustPEMs: [String] = []

    @Option(
        name: .customLong("trust-store"),
        help:
            "Trust-store directory: DIR/<mvpd>/*.pem or DIR/<mvpd>/metadata.xml (optional DIR/<mvpd>/issuer), or DIR/metadata.xml + DIR/metadata.map."
    )
    var trustStore: String?

    @Option(
        name: .customLong("metadata-cache"),
        help: "The gateway's metadata cache, for trust-store entries with metadata.url (their last fetched copies).")
    var metadataCache: String?

    @Option(help: "The audience every AudienceRestriction must name.")
    var audience: String = VerificationOptions().audience

    @Option(help: "Allowed clock skew in seconds.")
    var skew: Double = VerificationOptions().clockSkew

    @Flag(name: .customLong("allow-sha1"), help: "Accept SHA-1 signatures and digests (off by default: SHA-1 is broken).")
    var allowSHA1 = false

    /// Whether any source of trust was given.
    var givesTrust: Bool { !trustPEMs.isEmpty || trustStore != nil }

    func validate() throws {
        if !trustPEMs.isEmpty && trustStore != nil { throw ValidationError("use either --trust or --trust-store, not both") }
        if metadataCache != nil && trustStore == nil { throw ValidationError("--metadata-cache goes with --trust-store") }
        if skew < 0 { throw ValidationError("--skew must not be negative") }
    }

    /// The trust store: the directory's, or one provider named `pemMVPD` holding the `--trust` keys.
    func loadStore(pemMVPD: String) throws(TrustStoreError) -> TrustStore {
        if let trustStore { return try TrustStore.load(directory: trustStore, metadataCache: metadataCache) }
        var pems: [String] = []
        for path in trustPEMs {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw TrustStoreError("\(path): cannot read the file")
            }
            try TrustStore.refusePrivateKey(text, path: path)
            pems.append(text)
        }
        return TrustStore(providers: [try IdentityProviderTrust(mvpd: pemMVPD, certificatesPEM: pems)])
    }

    var verificationOptions: VerificationOptions {
        var options = VerificationOptions()
        options.audience = audience
        options.clockSkew = skew
        options.allowSHA1 = allowSHA1
        return options
    }
}
