import Foundation

/// The entry points the `samlgate idp` CLI calls.
public enum TestIdP {
    /// `samlgate idp keygen --out DIR [--alg rsa2048|p256]`: writes `key.pem` and `cert.pem`.
    @discardableResult
    public static func keygen(
        outDir: String, algorithm: KeyAlgorithm = .rsa2048, commonName: String = "samlgate test IdP"
    ) throws(TestIdPError) -> IdPKeyPair {
        let pair = try IdPKeyPair.generate(algorithm, commonName: commonName)
        try pair.write(to: outDir)
        return pair
    }

    /// `samlgate idp issue --key K --cert C --mvpd M --user U …`: one signed response.
    public static func issue(privateKeyPEM: String, certificatePEM: String, options: IssueOptions) throws(TestIdPError) -> [UInt8] {
        try TestIdentityProvider(privateKeyPEM: privateKeyPEM, certificatePEM: certificatePEM).issue(options)
    }

    /// Same, reading the two PEM files.
    public static func issue(keyPath: String, certificatePath: String, options: IssueOptions) throws(TestIdPError) -> [UInt8] {
        guard let key = try? String(contentsOfFile: keyPath, encoding: .utf8) else { throw TestIdPError("cannot read \(keyPath)") }
        guard let cert = try? String(contentsOfFile: certificatePath, encoding: .utf8) else { throw TestIdPError("cannot read \(certificatePath)") }
        return try issue(privateKeyPEM: key, certificatePEM: cert, options: options)
    }
}
