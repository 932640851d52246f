// The trust store's error and its codes. The file keeps this name: scripts/check_docs.py and
// MetricSeriesTests tell the trust store's codes from the verifier's by it.

import SAMLEncoding

// MARK: - TrustStoreError

/// A trust store, or one of its files, could not be loaded (missing directory, unreadable or
/// invalid PEM, malformed metadata, an aggregate entity the mapping names but the file lacks).
///
/// Shaped like ``VerificationError``: a stable ``code`` for logs, the CLI and `samlgate trust
/// list`, and a message that names the file. A store that fails to load is never half used: the
/// gateway refuses to start, and a reload keeps the previous snapshot.
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    /// The codes are ``ErrorCode``'s (the trust store's are declared below).
    public typealias Code = ErrorCode

    public var code: ErrorCode
    public var message: String

    /// An error of the general kind ``ErrorCode/trustStoreInvalid``.
    public init(_ message: String) {
        self.init(.trustStoreInvalid, message)
    }

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

// MARK: - The trust store's codes

/// The trust store's codes (``TrustStoreError``). They never reach an HTTP client: they stop
/// start-up, fail a reload, or show in `samlgate trust list`. Fetched metadata already past its
/// `validUntil` is ``ErrorCode/metadataExpired``, the verifier's code of the same name.
extension ErrorCode {
    /// The directory or a file in it is unusable: unreadable, no key for an MVPD, not a PEM
    /// certificate or public key, a private key, two MVPDs sharing a platform-mapping id.
    public static let trustStoreInvalid = ErrorCode("trust_store_invalid")
    /// A metadata file is not XML the hardened parser accepts (DOCTYPE, size, markup limits),
    /// or not SAML metadata of the expected shape (root, `entityID`, a certificate's base64,
    /// a `validUntil` that is not a date).
    public static let metadataMalformed = ErrorCode("metadata_malformed")
    /// An entity's metadata offers no certificate for signing (every `KeyDescriptor` is
    /// `use="encryption"`, or none carries an `X509Certificate`).
    public static let metadataNoSigningKey = ErrorCode("metadata_no_signing_key")
    /// A pinned metadata signer (`metadata-signer.pem`) is configured and the metadata's
    /// enveloped signature is missing, does not verify with it, or fails the verifier's
    /// defences (the verifier's code is in the message).
    public static let metadataSignatureInvalid = ErrorCode("metadata_signature_invalid")
    /// The aggregate's mapping file is malformed, names an entity the aggregate does not hold,
    /// or there is an aggregate without a mapping file.
    public static let metadataEntityMissing = ErrorCode("metadata_entity_missing")
    /// A `metadata.url` (or `metadata.refresh`) is unusable: not an `https://` URL (plain
    /// `http://` only with a pinned signer), credentials in it, beside a `metadata.xml`, a
    /// refresh interval out of range, or no metadata cache configured for fetched copies.
    public static let metadataSourceInvalid = ErrorCode("metadata_source_invalid")
    /// A refresh of fetched metadata failed (network, timeout, HTTP status, size, the cache
    /// not writable); the last good copy stays. Logged and counted by the gateway only.
    public static let metadataFetchFailed = ErrorCode("metadata_fetch_failed")
    /// A trusted key is too weak to rely on: RSA under 2048 bits, or EC on another curve than
    /// P-256, P-384 or P-521. An `allow-weak-keys` file in the MVPD's directory accepts its
    /// keys anyway (listed and logged as weak); metadata signers never are.
    public static let weakKey = ErrorCode("weak_key")
}
