extension TrustStoreError {
    /// A stable trust-store error code (`"metadata_malformed"`). These codes never reach an HTTP
    /// client: they stop start-up, fail a reload, or show in `samlgate trust list`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The codes themselves, private so that a new one breaks no caller: callers compare with
        /// the named constants below and keep a default branch (as swift-nio's `FileSystemError.Code`).
        private enum Base: String, Sendable {
            case trustStoreInvalid = "trust_store_invalid"
            case metadataMalformed = "metadata_malformed"
            case metadataNoSigningKey = "metadata_no_signing_key"
            case metadataSignatureInvalid = "metadata_signature_invalid"
            case metadataEntityMissing = "metadata_entity_missing"
            case metadataSourceInvalid = "metadata_source_invalid"
            case metadataExpired = "metadata_expired"
            case metadataFetchFailed = "metadata_fetch_failed"
            case weakKey = "weak_key"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The wire form (`"metadata_malformed"`), as HTTP error bodies, logs and metric labels show it.
        public var rawValue: String { base.rawValue }

        public var description: String { base.rawValue }

        /// The directory or a file in it is unusable: unreadable, no key for an MVPD, not a PEM
        /// certificate or public key, a private key, two MVPDs sharing a platform-mapping id.
        public static let trustStoreInvalid = Code(.trustStoreInvalid)
        /// A metadata file is not XML the hardened parser accepts (DOCTYPE, size, markup limits),
        /// or not SAML metadata of the expected shape (root, `entityID`, a certificate's base64,
        /// a `validUntil` that is not a date).
        public static let metadataMalformed = Code(.metadataMalformed)
        /// An entity's metadata offers no certificate for signing (every `KeyDescriptor` is
        /// `use="encryption"`, or none carries an `X509Certificate`).
        public static let metadataNoSigningKey = Code(.metadataNoSigningKey)
        /// A pinned metadata signer (`metadata-signer.pem`) is configured and the metadata's
        /// enveloped signature is missing, does not verify with it, or fails the verifier's
        /// defences (the verifier's code is in the message).
        public static let metadataSignatureInvalid = Code(.metadataSignatureInvalid)
        /// The aggregate's mapping file is malformed, names an entity the aggregate does not hold,
        /// or there is an aggregate without a mapping file.
        public static let metadataEntityMissing = Code(.metadataEntityMissing)
        /// A `metadata.url` (or `metadata.refresh`) is unusable: not an `https://` URL (plain
        /// `http://` only with a pinned signer), credentials in it, beside a `metadata.xml`, a
        /// refresh interval out of range, or no metadata cache configured for fetched copies.
        public static let metadataSourceInvalid = Code(.metadataSourceInvalid)
        /// Fetched metadata has already passed its `validUntil`: the last good copy is kept.
        /// (A loaded store's expired MVPD is reported, and refused per response, with the
        /// verifier's code of the same name.)
        public static let metadataExpired = Code(.metadataExpired)
        /// A refresh of fetched metadata failed (network, timeout, HTTP status, size, the cache
        /// not writable); the last good copy stays. Logged and counted by the gateway only.
        public static let metadataFetchFailed = Code(.metadataFetchFailed)
        /// A trusted key is too weak to rely on: RSA under 2048 bits, or EC on another curve than
        /// P-256, P-384 or P-521. An `allow-weak-keys` file in the MVPD's directory accepts its
        /// keys anyway (listed and logged as weak); metadata signers never are.
        public static let weakKey = Code(.weakKey)
    }
}
