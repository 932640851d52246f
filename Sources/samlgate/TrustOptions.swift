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
    ///
    /// `allowWeakKeys` (`verify --allow-weak-keys`) is an `allow-weak-keys` file for the `--trust`
    /// keys; a directory's entries keep their own. True admits a weak key and tells `warn`, as the
    /// gateway warns at every load; false refuses it naming the file and the flag, the trust
    /// store's advice (a file in the MVPD's directory) being no use with `--trust`. `nil`, for a
    /// command without the flag, refuses it with the trust store's message.
    func loadStore(pemMVPD: String, allowWeakKeys: Bool? = nil, warn: (String) -> Void = { _ in }) throws(TrustStoreError) -> TrustStore {
        if let trustStore { return try TrustStore.load(directory: trustStore, metadataCache: metadataCache) }
        var pems: [(path: String, text: String)] = []
        for path in trustPEMs {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw TrustStoreError("\(path): cannot read the file")
            }
            try TrustStore.refusePrivateKey(text, path: path)
            pems.append((path, text))
        }
        var keys: [TrustedKey] = []
        for (index, pem) in pems.enumerated() {
            // With the flag a weak key is loaded either way, so that its refusal can name the file and the flag.
            let key = try TrustedKey(pem: pem.text, source: "\(pemMVPD)#\(index)", allowWeak: allowWeakKeys != nil)
            if let weakness = key.weakness {
                guard allowWeakKeys == true else {
                    throw TrustStoreError(
                        .weakKey,
                        "\(pem.path): \(weakness) key; trusted keys are RSA of at least 2048 bits or EC on P-256, P-384 or P-521 "
                            + "(--allow-weak-keys accepts it, for testing an old IdP)")
                }
                warn("\(pem.path): \(weakness) key trusted because of --allow-weak-keys")
            }
            keys.append(key)
        }
        return TrustStore(providers: [IdentityProviderTrust(mvpd: pemMVPD, keys: keys)])
    }

    var verificationOptions: VerificationOptions {
        var options = VerificationOptions()
        options.audience = audience
        options.clockSkew = skew
        options.allowSHA1 = allowSHA1
        return options
    }
}
