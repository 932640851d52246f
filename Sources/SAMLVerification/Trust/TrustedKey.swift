import CXMLSec
import Crypto
import Foundation
import SAMLEncoding
import X509

/// One IdP public key, loaded once and shared read-only by every worker thread.
///
/// Holds only the key *value* (RSA or EC public key), never the X.509 data of the certificate
/// it came from: xmlsec re-decodes attached certificates on every key duplication (+55 %
/// instructions per verification), and the certificate chain is not what we trust — the
/// configured key is. The key is handed to each signature context for one verification and
/// taken back before the context is finalised, so it is never copied or freed on the hot path.
///
/// `@unchecked Sendable`: after init the xmlsec key is only read (xmlsec reads it and takes
/// an OpenSSL reference on its `EVP_PKEY`, which is atomic); it is destroyed in `deinit`,
/// when no verification can hold it any more.
public final class TrustedKey: @unchecked Sendable, CustomStringConvertible {
    let key: xmlSecKeyPtr
    /// The same key as OpenSSL's `EVP_PKEY`, referenced once here, for the signature checks made
    /// without xmlsec (``NativeSignature``); `nil` if OpenSSL has none (xmlsec then checks).
    /// Only read after init (OpenSSL allows concurrent verifications with one key).
    let publicKey: OpaquePointer?
    /// Where the key came from (file name or config label), for diagnostics only.
    public let source: String
    /// `"RSA"`, `"EC"` or the xmlsec key data name.
    public let algorithm: String
    /// SHA-256 of the DER the PEM carries (the certificate, or the `SubjectPublicKeyInfo` of a
    /// bare public key), lower-case hex: what `openssl x509 -fingerprint -sha256` prints, so an
    /// operator can match a key to the certificate an MVPD sent.
    public let fingerprint: String
    /// The certificate's `notAfter`; `nil` for a bare public key. Shown and measured only: the
    /// key is pinned, so an expired certificate still verifies (IdPs often sign with one).
    public let notAfter: Date?
    /// A certificate whose `notAfter` could not be read (neither swift-certificates nor OpenSSL
    /// parses it): `samlgate trust list` and `/metrics` report it, instead of it silently
    /// having no expiry to warn about.
    public let expiryUnreadable: Bool
    /// Why this key is below the trust store's minimum (`RSA-1024`, `EC secp256k1`) when an
    /// `allow-weak-keys` file let it in anyway; `nil` for a key that meets it. Shown by
    /// `samlgate trust list` and logged as a warning at every load.
    public let weakness: String?

    /// The first 8 hex digits of ``fingerprint``: the metrics label and the short form in
    /// `samlgate trust list`. Stored, since every accepted response reports it.
    public let shortFingerprint: String

    /// Loads the public key of a PEM certificate (`BEGIN CERTIFICATE`) or a PEM public key
    /// (`BEGIN PUBLIC KEY`). Certificate validity dates are not checked: the key is pinned.
    /// A private key is refused (see ``TrustStore/refusePrivateKey(_:path:)``).
    ///
    /// An RSA key under 2048 bits or an EC key on another curve than P-256, P-384 or P-521 is
    /// refused (`weak_key`) unless `allowWeak` (the MVPD's `allow-weak-keys` file) says otherwise.
    public init(pem: String, source: String = "config", allowWeak: Bool = false) throws(TrustStoreError) {
        try TrustStore.refusePrivateKey(pem, path: source)
        do {
            try XMLSecLibrary.ensureInitialized()
        } catch {
            throw TrustStoreError("xml security library failed to initialise: \(error.message)")
        }
        let isCertificate = pem.contains("BEGIN CERTIFICATE")
        let format = isCertificate ? xmlSecKeyDataFormatCertPem : xmlSecKeyDataFormatPem
        var bytes = Array(pem.utf8)
        let loaded = bytes.withUnsafeMutableBufferPointer { buffer in
            xmlSecOpenSSLAppKeyLoadMemory(buffer.baseAddress, UInt32(buffer.count), format, nil, nil, nil)
        }
        guard let loaded else {
            XMLSecLibrary.clearError()
            throw TrustStoreError("\(source): not a PEM certificate or public key")
        }
        defer { xmlSecKeyDestroy(loaded) }
        guard let value = xmlSecKeyGetValue(loaded), let copy = xmlSecKeyDataDuplicate(value) else {
            throw TrustStoreError("\(source): the certificate carries no usable public key")
        }
        guard let bare = xmlSecKeyCreate() else {
            xmlSecKeyDataDestroy(copy)
            throw TrustStoreError("\(source): out of memory")
        }
        if xmlSecKeySetValue(bare, copy) < 0 {
            xmlSecKeyDataDestroy(copy)
            xmlSecKeyDestroy(bare)
            throw TrustStoreError("\(source): cannot set the key value")
        }
        let weakness = Self.weakness(of: copy)
        if let weakness, !allowWeak {
            xmlSecKeyDestroy(bare)
            throw TrustStoreError(
                .weakKey,
                "\(source): \(weakness) key; the trust store takes RSA keys of at least 2048 bits and EC keys on P-256, P-384 or P-521 "
                    + "(an allow-weak-keys file in the MVPD's directory accepts it, with a warning at every load)")
        }
        self.weakness = weakness
        if let name = copy.pointee.id?.pointee.name {
            let text = String(cString: name)
            algorithm = text == "ecdsa" || text == "ec" ? "EC" : text.uppercased()
        } else {
            algorithm = "unknown"
        }
        self.key = bare
        publicKey = cxmlsec_public_key(bare)
        self.source = source
        let der = Self.derBytes(pem)
        fingerprint = HexDigits.lowercase(SHA256.hash(data: der))
        shortFingerprint = String(fingerprint.prefix(8))
        notAfter = isCertificate ? ((try? Certificate(derEncoded: der))?.notValidAfter ?? Self.openSSLNotAfter(der)) : nil
        expiryUnreadable = isCertificate && notAfter == nil
    }

    /// The base64 body of the first PEM block, decoded (empty when it is not base64, which
    /// xmlsec would already have refused).
    static func derBytes(_ pem: String) -> [UInt8] {
        var body = ""
        var inside = false
        for line in pem.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-----BEGIN ") {
                inside = true
            } else if trimmed.hasPrefix("-----END ") {
                break
            } else if inside && !trimmed.contains(":") {
                body += trimmed
            }
        }
        return Data(base64Encoded: body).map { Array($0) } ?? []
    }

    deinit {
        cxmlsec_public_key_free(publicKey)
        xmlSecKeyDestroy(key)
    }

    public var description: String { "\(algorithm) key from \(source)" }
}

// MARK: - Key strength

extension TrustedKey {
    /// The EC curves a trusted key may use, by OpenSSL's name: P-256, P-384, P-521 (the curves
    /// XML Signature's ECDSA algorithms are defined and deployed with).
    static let allowedCurves: Set<String> = ["prime256v1", "secp384r1", "secp521r1"]
    /// The smallest RSA modulus trusted: RSA-1024 is within reach of a well-funded forger.
    static let minimumRSABits = 2048

    /// `RSA-1024`, `EC secp256k1`, … for a key below the minimum; `nil` for one that meets it
    /// (or a type other than RSA and EC, whose signature algorithms the allow-list governs).
    static func weakness(of data: xmlSecKeyDataPtr) -> String? {
        var bits: Int32 = 0
        var group = [CChar](repeating: 0, count: 64)
        let kind = cxmlsec_key_strength(data, &bits, &group, group.count)
        switch kind {
        case 1:
            return bits < minimumRSABits ? "RSA-\(bits)" : nil
        case 2:
            let name = String(decoding: group.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return allowedCurves.contains(name) ? nil : "EC \(name.isEmpty ? "explicit-parameters" : name)"
        default:
            return nil
        }
    }

    /// The certificate's `notAfter` read by OpenSSL, for the certificates swift-certificates
    /// refuses to parse (DSA, unusual curves, RSA under 2048 bits); `nil` when OpenSSL cannot
    /// read it either.
    static func openSSLNotAfter(_ der: [UInt8]) -> Date? {
        var seconds: Int64 = 0
        let read = der.withUnsafeBufferPointer { cxmlsec_certificate_not_after($0.baseAddress, $0.count, &seconds) }
        return read == 0 ? Date(timeIntervalSince1970: TimeInterval(seconds)) : nil
    }
}
