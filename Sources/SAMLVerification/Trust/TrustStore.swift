import Foundation
import Synchronization

/// An immutable snapshot of the trusted IdP keys and issuers per MVPD.
///
/// Immutable so that every verification sees one consistent configuration without locking;
/// reloading means building a new snapshot and swapping it in (see ``ReloadableTrustStore``).
/// Keys hold only public key values (see ``TrustedKey``), loaded once and shared by all threads.
public final class TrustStore: Sendable {
    public let providers: [String: IdentityProviderTrust]
    /// platform-mapping id → MVPD id.
    private let mvpdByPlatformMappingID: [String: String]

    /// The metadata the gateway fetches for this store (`metadata.url` files), the aggregate's
    /// included; read by the gateway's refresh service.
    public let metadataSources: [MetadataSource]

    /// The largest `skew` an MVPD's policy sets (0 when none does): the replay record of an
    /// assertion outlives every window that could accept it (``Verifier``).
    public let largestPolicySkew: TimeInterval

    public init(providers: [IdentityProviderTrust], metadataSources: [MetadataSource] = []) {
        var map: [String: IdentityProviderTrust] = [:]
        var mapping: [String: String] = [:]
        for provider in providers {
            map[provider.mvpd] = provider
            mapping[provider.platformMappingID] = provider.mvpd
        }
        self.providers = map
        self.mvpdByPlatformMappingID = mapping
        self.metadataSources = metadataSources
        largestPolicySkew = providers.compactMap(\.policy.skew).max() ?? 0
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
    /// - `metadata.url` (optional `metadata.refresh`) instead of either `metadata.xml`: the
    ///   metadata is fetched by the gateway, and what is read here is its last good copy in
    ///   `metadataCache` (see ``MetadataSource``); until one exists the MVPD is listed and not
    ///   ready (`metadata_unavailable`);
    /// - the optional one-line `<directory>/<mvpd>/issuer` (overrides the `entityID`),
    ///   `<directory>/<mvpd>/platform-mapping-id` and `<directory>/<mvpd>/mode` (`enforce` or
    ///   `report-only`, over the gateway's `mode`), and `<directory>/<mvpd>/policy` (its own
    ///   verification policy, ``ProviderPolicy``);
    /// - the optional empty `<directory>/<mvpd>/allow-weak-keys`: its keys may be RSA under 2048
    ///   bits or EC on other curves than P-256/384/521 (refused otherwise, `weak_key`);
    /// - `metadata-signer.pem` beside a `metadata.xml` or `metadata.url`: the pinned
    ///   certificate(s) its enveloped signature must verify with (never an IdP key itself).
    ///
    /// An MVPD directory with no key source is refused, so a typo cannot silently leave an MVPD
    /// without keys; so is a key shared by MVPDs without an issuer binding each
    /// (see ``refuseUnboundSharedKeys(_:)``). Expired metadata loads (the MVPD is listed, not ready, and its responses are
    /// refused with `metadata_expired`), so the rest of the store keeps working.
    public static func load(directory: String, metadataCache: String? = nil) throws(TrustStoreError) -> TrustStore {
        let fm = FileManager.default
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let names: [String]
        do {
            names = try fm.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw TrustStoreError("cannot read trust store directory \(directory)")
        }
        var aggregate = try loadAggregate(base, cache: metadataCache)
        var sources = aggregate.source.map { [$0] } ?? []
        var providers: [IdentityProviderTrust] = []
        for name in names where !name.hasPrefix(".") {
            let dir = base.appendingPathComponent(name, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: dir.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let mapped = aggregate.members.removeValue(forKey: name)
            let provider = try loadEntry(name, dir, aggregated: mapped, cache: metadataCache, existing: providers)
            if let source = provider.metadataSource, !source.isAggregate { sources.append(source) }
            providers.append(provider)
        }
        for (name, member) in aggregate.members.sorted(by: { $0.key < $1.key }) {
            providers.append(
                try provider(
                    name, pemKeys: [], entity: member.entity, metadataLabel: member.label, source: member.kind,
                    remote: aggregate.source, problem: member.problem, issuer: nil, mapping: nil, existing: providers))
        }
        try refuseUnboundSharedKeys(providers)
        return TrustStore(providers: providers, metadataSources: sources)
    }

    /// One `<directory>/<name>/`: its PEM files, its metadata file (or fetched copy) or the
    /// aggregate's entity mapped to it, its one-line files.
    private static func loadEntry(
        _ name: String, _ dir: URL, aggregated: AggregateMember?, cache: String?,
        existing: [IdentityProviderTrust]
    ) throws(TrustStoreError) -> IdentityProviderTrust {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter {
            $0.hasSuffix(".pem") && $0 != metadataSignerFile
        }.sorted()
        let allowWeak = FileManager.default.fileExists(atPath: dir.appendingPathComponent(allowWeakKeysFile).path)
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
                keys.append(
                    try TrustedKey(pem: block, source: blocks.count == 1 ? "\(name)/\(file)" : "\(name)/\(file)#\(index)", allowWeak: allowWeak))
            }
        }
        let metadataPath = dir.appendingPathComponent(metadataFile).path
        let remote = try MetadataSource.read(directory: dir.path + "/", mvpd: name, cache: cache)
        var entity = aggregated?.entity
        var label = aggregated?.label ?? metadataFile
        var sources = keys.isEmpty ? [] : ["pem"]
        var problem = aggregated?.problem
        let local = FileManager.default.fileExists(atPath: metadataPath)
        if (local || remote != nil) && aggregated != nil {
            throw TrustStoreError(
                "\(name) has its own \(local ? metadataFile : MetadataSource.urlFile) and an entity in the aggregate's metadata.map; keep one")
        }
        if local && remote != nil {
            throw TrustStoreError(.metadataSourceInvalid, "\(name) has both \(metadataFile) and \(MetadataSource.urlFile); keep one")
        }
        if local {
            label = "\(name)/\(metadataFile)"
            entity = try readEntity(metadataPath, label: label, signerDirectory: dir, name: name)
            sources.append("metadata")
        } else if let remote {
            label = "\(name)/\(MetadataSource.urlFile) (cached copy)"
            if remote.hasCachedCopy {
                // The copy is derived data: one that no longer loads (the pinned signer was
                // changed, the file was damaged) leaves the MVPD waiting for the next fetch
                // instead of stopping the whole store.
                do {
                    entity = try readEntity(remote.cachePath, label: label, signerDirectory: dir, name: name)
                } catch {
                    problem = error.description
                }
            }
            sources.append("remote")
        } else if let aggregated {
            sources.append(aggregated.kind)
        }
        guard !keys.isEmpty || entity != nil || remote != nil || aggregated != nil else {
            throw TrustStoreError("trust store entry \(name) has no .pem file, metadata.xml or metadata.url")
        }
        var trust = try provider(
            name, pemKeys: keys, entity: entity, metadataLabel: label, source: sources.joined(separator: "+"),
            remote: remote ?? aggregated?.source, problem: problem, allowWeak: allowWeak,
            issuer: try oneLineFile(dir.appendingPathComponent("issuer").path),
            mapping: try oneLineFile(dir.appendingPathComponent("platform-mapping-id").path), existing: existing)
        if let mode = try oneLineFile(dir.appendingPathComponent("mode").path) {
            guard let parsed = EnforcementMode(rawValue: mode) else {
                throw TrustStoreError("trust store entry \(name): mode must be enforce or report-only, not \"\(mode.prefix(40))\"")
            }
            trust.mode = parsed
        }
        if let policy = try ProviderPolicy.read(dir.appendingPathComponent(ProviderPolicy.fileName).path, entry: name) {
            trust.policy = policy
        }
        return trust
    }

    /// The one entity of an MVPD's own metadata file at `path`, checked with the signer pinned
    /// in `signerDirectory`.
    private static func readEntity(_ path: String, label: String, signerDirectory: URL, name: String) throws(TrustStoreError) -> MetadataEntity {
        let signers = try metadataSigners(signerDirectory.appendingPathComponent(metadataSignerFile).path, label: "\(name)/\(metadataSignerFile)")
        let entities = try MetadataReader.read(path: path, label: label, limit: MetadataReader.entityFileLimit, signers: signers)
        return try single(entities, label: label)
    }

    /// The only entity of an MVPD's metadata.
    static func single(_ entities: [MetadataEntity], label: String) throws(TrustStoreError) -> MetadataEntity {
        guard entities.count == 1 else {
            throw TrustStoreError(.metadataMalformed, "\(label): holds \(entities.count) entities; one MVPD's metadata holds one EntityDescriptor")
        }
        return entities[0]
    }

    /// The signing keys of `entity` (`label` names its file in errors); at least one.
    static func keys(of entity: MetadataEntity, label: String, allowWeak: Bool = false) throws(TrustStoreError) -> [TrustedKey] {
        guard !entity.signingCertificates.isEmpty else {
            throw TrustStoreError(.metadataNoSigningKey, "\(label): entity \(entity.entityID) has no signing certificate")
        }
        guard entity.signingCertificates.count <= maximumKeysPerMVPD else {
            throw TrustStoreError(
                .metadataMalformed,
                "\(label): entity \(entity.entityID) has \(entity.signingCertificates.count) signing certificates; at most \(maximumKeysPerMVPD)")
        }
        var keys: [TrustedKey] = []
        for (index, certificate) in entity.signingCertificates.enumerated() {
            do {
                keys.append(
                    try TrustedKey(pem: MetadataEntity.pem(certificate), source: "\(label)#\(entity.entityID)#\(index)", allowWeak: allowWeak))
            } catch {
                throw TrustStoreError(error.code == .weakKey ? .weakKey : .metadataMalformed, error.message)
            }
        }
        return keys
    }

    /// The trust of one MVPD from its PEM keys and metadata entity. With neither (a fetched
    /// source with no good copy yet) it has no keys and is not ready.
    private static func provider(
        _ name: String, pemKeys: [TrustedKey], entity: MetadataEntity?, metadataLabel: String, source: String,
        remote: MetadataSource?, problem: String? = nil, allowWeak: Bool = false, issuer: String?, mapping: String?,
        existing: [IdentityProviderTrust]
    ) throws(TrustStoreError) -> IdentityProviderTrust {
        var keys = pemKeys
        if let entity { keys += try Self.keys(of: entity, label: metadataLabel, allowWeak: allowWeak) }
        guard keys.count <= maximumKeysPerMVPD else {
            throw TrustStoreError(
                "trust store entry \(name) has \(keys.count) keys; at most \(maximumKeysPerMVPD) (an IdP's keys, a rotation's worth, not a CA bundle)"
            )
        }
        if let other = existing.first(where: { $0.platformMappingID == (mapping ?? name) }) {
            throw TrustStoreError("trust store entries \(other.mvpd) and \(name) share the platform-mapping-id \(mapping ?? name)")
        }
        return IdentityProviderTrust(
            mvpd: name, keys: keys, issuer: issuer ?? entity?.entityID, platformMappingID: mapping,
            entityID: entity?.entityID, validUntil: entity?.validUntil, source: source, metadataSource: remote,
            cachedCopyProblem: problem)
    }

    /// `metadata.xml`: an MVPD's metadata, or beside the entries the aggregate; also the name of
    /// a fetched copy in the metadata cache.
    static let metadataFile = "metadata.xml"
    /// The aggregate's mapping of MVPD ids to entity ids.
    static let metadataMapFile = "metadata.map"

    /// The most keys one MVPD may trust. A response no key signed is refused after one check of
    /// its `SignedInfo` per key, and below the verifier's large-document size after one full
    /// xmlsec pass per key: the bound keeps a forged response's cost bounded. A rotation needs
    /// two or three; what exceeds this is a mistake (a linked CA bundle), not an IdP.
    static let maximumKeysPerMVPD = 16

    /// The file in an MVPD's directory whose presence lets its keys be weaker than the minimum
    /// (see ``TrustedKey/init(pem:source:allowWeak:)``): an explicit, per-MVPD decision, listed
    /// by `samlgate trust list` and logged at every load.
    static let allowWeakKeysFile = "allow-weak-keys"

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

// MARK: - Keys shared by several MVPDs

extension TrustStore {
    /// Refuses a key trusted for several MVPDs unless each of them has an issuer binding (an
    /// `issuer` file, or the `entityID` of its metadata).
    ///
    /// Without one, a response that one MVPD's IdP signed verifies for every MVPD sharing its
    /// key, so a client naming another MVPD is believed: the issuer binding is what tells the
    /// MVPDs apart. One IdP serving several MVPD ids stays possible — give each entry an `issuer`
    /// file (the same one if its responses carry the same Issuer). `providers` are checked in
    /// order; the error names the first unbound MVPD's key files and the fix.
    static func refuseUnboundSharedKeys(_ providers: [IdentityProviderTrust]) throws(TrustStoreError) {
        var holders: [String: [(mvpd: String, source: String, bound: Bool)]] = [:]
        var order: [String] = []
        for provider in providers {
            var seen: Set<String> = []
            for key in provider.keys where seen.insert(key.fingerprint).inserted {
                if holders[key.fingerprint] == nil { order.append(key.fingerprint) }
                holders[key.fingerprint, default: []].append((provider.mvpd, key.source, provider.issuer != nil))
            }
        }
        for fingerprint in order {
            guard let list = holders[fingerprint], list.count > 1, list.contains(where: { !$0.bound }) else { continue }
            let unbound = list.filter { !$0.bound }.map(\.mvpd)
            throw TrustStoreError(
                "the key \(fingerprint.prefix(8)) (\(list.map(\.source).joined(separator: ", "))) is trusted for the MVPDs "
                    + "\(list.map(\.mvpd).joined(separator: ", ")) and \(unbound.joined(separator: ", ")) has no issuer binding: "
                    + "add an issuer file (\(unbound.map { "\($0)/issuer" }.joined(separator: ", "))) naming the Issuer its responses carry, "
                    + "so that a response for one MVPD cannot be accepted as another's")
        }
    }
}

// MARK: - ReloadableTrustStore

/// Holds the current ``TrustStore`` snapshot and swaps it atomically on reload.
///
/// Readers take the snapshot once per request (``current``) and keep using it for the whole
/// verification, so a reload never mixes two configurations inside one request. A failed
/// reload keeps the previous snapshot.
public final class ReloadableTrustStore: Sendable {
    private let snapshot: Mutex<TrustStore>
    /// Held for a whole ``reload()``: SIGHUP, the poll and a metadata refresh can ask at the same
    /// moment, and without it an older load finishing last would replace a newer one.
    private let reloading = Mutex<Void>(())
    /// The directory ``reload()`` reads, if any.
    public let directory: String?
    /// Where fetched metadata's last good copies are (see ``MetadataSource``).
    public let metadataCache: String?

    public init(_ initial: TrustStore, directory: String? = nil, metadataCache: String? = nil) {
        self.snapshot = Mutex(initial)
        self.directory = directory
        self.metadataCache = metadataCache
    }

    /// Loads `directory` now and remembers it for ``reload()``.
    public convenience init(directory: String, metadataCache: String? = nil) throws(TrustStoreError) {
        self.init(try TrustStore.load(directory: directory, metadataCache: metadataCache), directory: directory, metadataCache: metadataCache)
    }

    public var current: TrustStore {
        snapshot.withLock { $0 }
    }

    public func replace(with store: TrustStore) {
        snapshot.withLock { $0 = store }
    }

    /// Re-reads ``directory``; on error the current snapshot stays in place and the error is thrown.
    @discardableResult
    public func reload() throws(TrustStoreError) -> TrustStore {
        guard let directory else { throw TrustStoreError("this trust store was not loaded from a directory") }
        let metadataCache = self.metadataCache
        let result = reloading.withLock { _ -> Result<TrustStore, TrustStoreError> in
            do throws(TrustStoreError) {
                let fresh = try TrustStore.load(directory: directory, metadataCache: metadataCache)
                replace(with: fresh)
                return .success(fresh)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
