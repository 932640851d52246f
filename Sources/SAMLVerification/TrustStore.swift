import Foundation

/// An immutable snapshot of the trusted IdP keys and issuers per MVPD.
///
/// Immutable so that every verification sees one consistent configuration without locking;
/// reloading means building a new snapshot and swapping it in (see ``ReloadableTrustStore``).
/// Keys hold only public key values (see ``TrustedKey``), loaded once and shared by all threads.
public final class TrustStore: Sendable {
    public let providers: [String: IdentityProviderTrust]
    /// platform-mapping id → MVPD id.
    private let mvpdByPlatformMappingID: [String: String]

    public init(providers: [IdentityProviderTrust]) {
        var map: [String: IdentityProviderTrust] = [:]
        var mapping: [String: String] = [:]
        for provider in providers {
            map[provider.mvpd] = provider
            mapping[provider.platformMappingID] = provider.mvpd
        }
        self.providers = map
        self.mvpdByPlatformMappingID = mapping
    }

    /// The MVPD whose platform-mapping id is `id` (what a v2 partner status names).
    public func mvpd(forPlatformMappingID id: String) -> String? {
        mvpdByPlatformMappingID[id]
    }

    /// The trust configuration of `mvpd`, or `nil` when it is unknown.
    public func provider(for mvpd: String) -> IdentityProviderTrust? {
        providers[mvpd]
    }

    /// MVPD ids, sorted.
    public var mvpds: [String] { providers.keys.sorted() }

    /// MVPDs whose responses can be verified at `now` (see ``IdentityProviderTrust/isReady(at:)``).
    public func readyCount(at now: Date = Date()) -> Int {
        providers.values.reduce(0) { $0 + ($1.isReady(at: now) ? 1 : 0) }
    }

    /// Loads the trust store directory; the one loading function behind start-up, reloads and
    /// the command line, so they can never disagree about what a directory means.
    ///
    /// - `<directory>/<mvpd>/*.pem`: certificates or public keys (each file may hold several
    ///   PEM blocks);
    /// - `<directory>/<mvpd>/metadata.xml`: the IdP's SAML metadata (an `EntityDescriptor`):
    ///   its signing certificates, its `entityID` as the expected Issuer, its `validUntil`;
    /// - `<directory>/metadata.xml` + `<directory>/metadata.map`: an aggregate
    ///   (`EntitiesDescriptor`) and the lines `<mvpd> <entityID>` that pick its entities;
    /// - the optional one-line `<directory>/<mvpd>/issuer` (overrides the `entityID`) and
    ///   `<directory>/<mvpd>/platform-mapping-id`;
    /// - `metadata-signer.pem` beside a `metadata.xml`: the pinned certificate(s) its enveloped
    ///   signature must verify with (never an IdP key itself).
    ///
    /// An MVPD directory with no key source is refused, so a typo cannot silently leave an MVPD
    /// without keys. Expired metadata loads (the MVPD is listed, not ready, and its responses are
    /// refused with `metadata_expired`), so the rest of the store keeps working.
    public static func load(directory: String) throws(TrustStoreError) -> TrustStore {
        let fm = FileManager.default
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let names: [String]
        do {
            names = try fm.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw TrustStoreError("cannot read trust store directory \(directory)")
        }
        var aggregate = try loadAggregate(base)
        var providers: [IdentityProviderTrust] = []
        for name in names where !name.hasPrefix(".") {
            let dir = base.appendingPathComponent(name, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: dir.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let mapped = aggregate.removeValue(forKey: name)
            providers.append(try loadEntry(name, dir, aggregated: mapped, existing: providers))
        }
        for (name, entity) in aggregate.sorted(by: { $0.key < $1.key }) {
            providers.append(try provider(name, pemKeys: [], entity: entity, metadataLabel: "metadata.xml", source: "aggregate",
                                          issuer: nil, mapping: nil, existing: providers))
        }
        return TrustStore(providers: providers)
    }

    /// One `<directory>/<name>/`: its PEM files, its metadata file or the aggregate's entity
    /// mapped to it, its one-line files.
    private static func loadEntry(_ name: String, _ dir: URL, aggregated: MetadataEntity?,
                                  existing: [IdentityProviderTrust]) throws(TrustStoreError) -> IdentityProviderTrust {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".pem") && $0 != metadataSignerFile }.sorted()
        var keys: [TrustedKey] = []
        for file in files {
            let path = dir.appendingPathComponent(file).path
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw TrustStoreError("cannot read \(path)")
            }
            try refusePrivateKey(text, path: path)
            let blocks = pemBlocks(text)
            guard !blocks.isEmpty else { throw TrustStoreError("\(path) holds no PEM block") }
            for (index, block) in blocks.enumerated() {
                keys.append(try TrustedKey(pem: block, source: blocks.count == 1 ? "\(name)/\(file)" : "\(name)/\(file)#\(index)"))
            }
        }
        let metadataPath = dir.appendingPathComponent("metadata.xml").path
        var entity = aggregated
        var label = "metadata.xml"
        var sources = keys.isEmpty ? [] : ["pem"]
        if FileManager.default.fileExists(atPath: metadataPath) {
            if aggregated != nil {
                throw TrustStoreError("\(name) has its own metadata.xml and an entity in the aggregate's metadata.map; keep one")
            }
            label = "\(name)/metadata.xml"
            let signers = try metadataSigners(dir.appendingPathComponent(metadataSignerFile).path, label: "\(name)/\(metadataSignerFile)")
            let entities = try MetadataReader.read(path: metadataPath, label: label, limit: MetadataReader.entityFileLimit, signers: signers)
            guard entities.count == 1 else {
                throw TrustStoreError(.metadataMalformed, "\(label): holds \(entities.count) entities; one MVPD's metadata.xml holds one EntityDescriptor")
            }
            entity = entities[0]
            sources.append("metadata")
        } else if aggregated != nil {
            sources.append("aggregate")
        }
        guard !keys.isEmpty || entity != nil else {
            throw TrustStoreError("trust store entry \(name) has no .pem file or metadata.xml")
        }
        return try provider(name, pemKeys: keys, entity: entity, metadataLabel: label, source: sources.joined(separator: "+"),
                            issuer: try oneLineFile(dir.appendingPathComponent("issuer").path),
                            mapping: try oneLineFile(dir.appendingPathComponent("platform-mapping-id").path), existing: existing)
    }

    /// The trust of one MVPD from its PEM keys and metadata entity.
    private static func provider(_ name: String, pemKeys: [TrustedKey], entity: MetadataEntity?, metadataLabel: String, source: String,
                                 issuer: String?, mapping: String?, existing: [IdentityProviderTrust]) throws(TrustStoreError) -> IdentityProviderTrust {
        var keys = pemKeys
        if let entity {
            guard !entity.signingCertificates.isEmpty else {
                throw TrustStoreError(.metadataNoSigningKey, "\(metadataLabel): entity \(entity.entityID) has no signing certificate")
            }
            for (index, certificate) in entity.signingCertificates.enumerated() {
                do {
                    keys.append(try TrustedKey(pem: MetadataEntity.pem(certificate), source: "\(metadataLabel)#\(entity.entityID)#\(index)"))
                } catch {
                    throw TrustStoreError(.metadataMalformed, error.message)
                }
            }
        }
        if let other = existing.first(where: { $0.platformMappingID == (mapping ?? name) }) {
            throw TrustStoreError("trust store entries \(other.mvpd) and \(name) share the platform-mapping-id \(mapping ?? name)")
        }
        return IdentityProviderTrust(mvpd: name, keys: keys, issuer: issuer ?? entity?.entityID, platformMappingID: mapping,
                                     entityID: entity?.entityID, validUntil: entity?.validUntil, source: source)
    }

    /// The file that pins the signer of the `metadata.xml` beside it.
    static let metadataSignerFile = "metadata-signer.pem"

    /// The pinned metadata signer keys in `path`, or `nil` when the file does not exist (the
    /// metadata's signature, if any, is then not checked).
    static func metadataSigners(_ path: String, label: String) throws(TrustStoreError) -> [TrustedKey]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw TrustStoreError("cannot read \(path)")
        }
        try refusePrivateKey(text, path: path)
        let blocks = pemBlocks(text)
        guard !blocks.isEmpty else { throw TrustStoreError("\(path) holds no PEM block") }
        var keys: [TrustedKey] = []
        for (index, block) in blocks.enumerated() {
            keys.append(try TrustedKey(pem: block, source: blocks.count == 1 ? label : "\(label)#\(index)"))
        }
        return keys
    }

    /// Throws when `text` holds a private key (`PRIVATE KEY`, `RSA PRIVATE KEY`, `EC PRIVATE KEY`,
    /// `ENCRYPTED PRIVATE KEY`, …). xmlsec would load one and trust its public half, so the
    /// store would work, but a signing key would sit on every gateway host, readable by the
    /// service: a trust store holds what the IdP publishes, never what it signs with. `path`
    /// names the file in the error.
    public static func refusePrivateKey(_ text: String, path: String) throws(TrustStoreError) {
        if holdsPrivateKey(text) {
            throw TrustStoreError("\(path) holds a private key; a trust store takes IdP certificates or public keys only")
        }
    }

    /// Whether any PEM label in `text` ends in `PRIVATE KEY`.
    static func holdsPrivateKey(_ text: String) -> Bool {
        text.contains("PRIVATE KEY-----")
    }

    /// The trimmed content of an optional one-line file; `nil` when absent or empty.
    static func oneLineFile(_ path: String) throws(TrustStoreError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw TrustStoreError("cannot read \(path)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Splits text into its `-----BEGIN …-----` … `-----END …-----` blocks.
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring] = []
        var inside = false
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-----BEGIN ") {
                inside = true
                current = [Substring(trimmed)]
            } else if inside {
                current.append(Substring(trimmed))
                if trimmed.hasPrefix("-----END ") {
                    blocks.append(current.joined(separator: "\n") + "\n")
                    inside = false
                }
            }
        }
        return blocks
    }
}
