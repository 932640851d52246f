import CXMLSec

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
    /// Where the key came from (file name or config label), for diagnostics only.
    public let source: String
    /// `"RSA"`, `"EC"` or the xmlsec key data name.
    public let algorithm: String

    /// Loads the public key of a PEM certificate (`BEGIN CERTIFICATE`) or a PEM public key
    /// (`BEGIN PUBLIC KEY`). Certificate validity dates are not checked: the key is pinned.
    /// A private key is refused (see ``TrustStore/refusePrivateKey(_:path:)``).
    public init(pem: String, source: String = "config") throws(TrustStoreError) {
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
        if let name = copy.pointee.id?.pointee.name {
            let text = String(cString: name)
            algorithm = text == "ecdsa" || text == "ec" ? "EC" : text.uppercased()
        } else {
            algorithm = "unknown"
        }
        self.key = bare
        self.source = source
    }

    deinit {
        xmlSecKeyDestroy(key)
    }

    public var description: String { "\(algorithm) key from \(source)" }
}
