import Crypto
import Foundation
import X509
import _CryptoExtras

/// A private key and its self-signed certificate, both PEM: what an MVPD's IdP signs with
/// and what the gateway's trust store pins.
public struct IdPKeyPair: Sendable {
    public let algorithm: KeyAlgorithm
    public let privateKeyPEM: String
    public let certificatePEM: String

    public init(algorithm: KeyAlgorithm, privateKeyPEM: String, certificatePEM: String) {
        self.algorithm = algorithm
        self.privateKeyPEM = privateKeyPEM
        self.certificatePEM = certificatePEM
    }

    /// Generates an RSA-2048 or P-256 key and a self-signed certificate valid for `validity`
    /// seconds (ten years unless told otherwise; shorter to exercise expiry warnings).
    public static func generate(
        _ algorithm: KeyAlgorithm, commonName: String = "samlgate test IdP",
        validity: TimeInterval = 10 * 365 * 86_400
    ) throws(TestIdPError) -> IdPKeyPair {
        do {
            let certificateKey: Certificate.PrivateKey
            let privatePEM: String
            let signatureAlgorithm: Certificate.SignatureAlgorithm
            switch algorithm {
            case .rsa2048:
                let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                certificateKey = Certificate.PrivateKey(key)
                privatePEM = key.pemRepresentation
                signatureAlgorithm = .sha256WithRSAEncryption
            case .p256:
                let key = P256.Signing.PrivateKey()
                certificateKey = Certificate.PrivateKey(key)
                privatePEM = key.pemRepresentation
                signatureAlgorithm = .ecdsaWithSHA256
            }
            let name = try DistinguishedName {
                OrganizationName("samlgate")
                CommonName(commonName)
            }
            let now = Date()
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: certificateKey.publicKey,
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(validity),
                issuer: name,
                subject: name,
                signatureAlgorithm: signatureAlgorithm,
                extensions: Certificate.Extensions(),
                issuerPrivateKey: certificateKey)
            let certificatePEM = try certificate.serializeAsPEM().pemString
            return IdPKeyPair(algorithm: algorithm, privateKeyPEM: privatePEM, certificatePEM: certificatePEM + "\n")
        } catch {
            throw TestIdPError("key generation failed: \(error)")
        }
    }

    /// Writes `key.pem` (mode 0600) and `cert.pem` into `directory`, creating it if needed.
    /// Returns the two paths.
    @discardableResult
    public func write(to directory: String) throws(TestIdPError) -> (key: String, certificate: String) {
        let fm = FileManager.default
        let keyPath = (directory as NSString).appendingPathComponent("key.pem")
        let certPath = (directory as NSString).appendingPathComponent("cert.pem")
        do {
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(privateKeyPEM.utf8).write(to: URL(fileURLWithPath: keyPath))
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
            try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: certPath))
        } catch {
            throw TestIdPError("cannot write keys to \(directory): \(error)")
        }
        return (keyPath, certPath)
    }

    /// The base64 body of the certificate (the content of `ds:X509Certificate`).
    var certificateBase64: String {
        certificatePEM.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
    }
}

// MARK: - Key algorithms

/// The key types the test IdP generates.
public enum KeyAlgorithm: String, Sendable, CaseIterable {
    case rsa2048
    case p256
}
