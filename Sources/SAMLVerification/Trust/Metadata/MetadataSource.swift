import Foundation

// MARK: - MetadataSource

/// Metadata the gateway fetches itself: a `metadata.url` file in the trust store, in an MVPD's
/// directory (its `EntityDescriptor`) or beside the entries (an aggregate read through
/// `metadata.map`).
///
/// The trust store never reads the network: it reads the *last good copy* of each source from
/// the metadata cache (setting `metadata-cache`), which mirrors the store's layout
/// (`<cache>/<mvpd>/metadata.xml`, `<cache>/metadata.xml`). The gateway's refresh service
/// fetches, checks a copy with ``check(_:now:)`` — every rule a load applies, so a copy that
/// would not load is never written — and only then replaces the cached copy. A failed fetch, an
/// HTTP error, a bad signature or expired metadata thus leaves the last good copy in use.
public struct MetadataSource: Sendable, Equatable {
    /// The MVPD id, or ``aggregateName`` for the aggregate; the `source` label of the metrics.
    public let name: String
    /// Where the document is fetched from (`https://`, or `http://` with a pinned signer).
    public let url: URL
    /// Seconds between fetches (`metadata.refresh`); `nil`: the gateway's `metadata-refresh`.
    public let refresh: TimeInterval?
    /// The last good copy.
    public let cachePath: String
    /// The store directory the source belongs to (the MVPD's, or the store's for the aggregate):
    /// where its `metadata-signer.pem`, and for the aggregate `metadata.map`, are read.
    let directory: String
    /// Largest document accepted, bytes (one entity, or an aggregate).
    public let sizeLimit: Int
    /// The aggregate (`DIR/metadata.url`), read through `metadata.map`.
    public let isAggregate: Bool

    /// ``name`` of the aggregate source.
    public static let aggregateName = "aggregate"
    /// The file naming a source's URL.
    static let urlFile = "metadata.url"
    /// The optional file giving its refresh interval in seconds.
    static let refreshFile = "metadata.refresh"
    /// Refresh intervals outside this range are refused (one of a year would never refresh). The
    /// floor is low so that tests and a local IdP can refresh quickly; the setting
    /// `metadata-refresh`, the default for every source, starts at a second.
    static let refreshRange: ClosedRange<TimeInterval> = 0.05...(7 * 86_400)

    /// The source described by the `metadata.url` in `directory` (ending in `/`): the MVPD
    /// `mvpd`'s, or with `mvpd` `nil` the aggregate's. `nil` when there is none.
    static func read(directory: String, mvpd: String?, cache: String?) throws(TrustStoreError) -> MetadataSource? {
        let name = mvpd ?? aggregateName
        let urlPath = directory + urlFile
        guard let text = try TrustStore.oneLineFile(urlPath) else {
            if FileManager.default.fileExists(atPath: urlPath) {
                throw TrustStoreError(.metadataSourceInvalid, "\(label(mvpd, urlFile)) is empty")
            }
            return nil
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host?.isEmpty == false, url.user == nil, url.password == nil, url.fragment == nil
        else {
            throw TrustStoreError(.metadataSourceInvalid, "\(label(mvpd, urlFile)): expected an https:// URL without credentials")
        }
        let signed = FileManager.default.fileExists(atPath: directory + TrustStore.metadataSignerFile)
        guard scheme == "https" || signed else {
            // Plain HTTP is what federations use for signed aggregates; without a pinned signer
            // anyone on the path could substitute keys.
            throw TrustStoreError(
                .metadataSourceInvalid,
                "\(label(mvpd, urlFile)): http:// is accepted only with a pinned \(TrustStore.metadataSignerFile) beside it")
        }
        var refresh: TimeInterval?
        if let text = try TrustStore.oneLineFile(directory + refreshFile) {
            guard let seconds = TimeInterval(text), refreshRange.contains(seconds) else {
                throw TrustStoreError(
                    .metadataSourceInvalid,
                    "\(label(mvpd, refreshFile)): expected seconds in \(refreshRange.lowerBound)...\(Int(refreshRange.upperBound))")
            }
            refresh = seconds
        }
        guard let cache else {
            throw TrustStoreError(
                .metadataSourceInvalid, "\(label(mvpd, urlFile)) needs a metadata cache (setting metadata-cache) for its fetched copies")
        }
        var cachePath = URL(fileURLWithPath: cache, isDirectory: true)
        if let mvpd { cachePath.appendPathComponent(mvpd, isDirectory: true) }
        return MetadataSource(
            name: name, url: url, refresh: refresh, cachePath: cachePath.appendingPathComponent(TrustStore.metadataFile).path,
            directory: directory, sizeLimit: mvpd == nil ? MetadataReader.aggregateFileLimit : MetadataReader.entityFileLimit,
            isAggregate: mvpd == nil)
    }

    /// A file of the source, as errors name it (`Cablevision/metadata.url`, `metadata.url`).
    func label(_ file: String) -> String {
        isAggregate ? file : "\(name)/\(file)"
    }

    /// A file of the MVPD `mvpd` (`nil`: the aggregate), as errors name it.
    static func label(_ name: String?, _ file: String) -> String {
        name.map { "\($0)/\(file)" } ?? file
    }

    /// Whether a last good copy exists.
    public var hasCachedCopy: Bool { FileManager.default.fileExists(atPath: cachePath) }

    /// The URL as it may be shown (the query can carry a token; it is left out).
    public var displayURL: String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        return components?.string ?? url.absoluteString
    }

    /// Checks a fetched document by the rules a load applies — hardened parsing, the size limit,
    /// the pinned signer's signature, one entity with a signing key for an MVPD, every mapped
    /// entity present for the aggregate — and that it has not expired (an expired copy is no
    /// better than the last good one); over `http://`, that it has a `validUntil` at all, which
    /// bounds how long an old signed copy can be replayed. Throws the error a load would report;
    /// returns what orders the copy against another (``MetadataPublication``).
    @discardableResult
    public func check(_ bytes: [UInt8], now: Date = Date()) throws(TrustStoreError) -> MetadataPublication {
        guard bytes.count <= sizeLimit else {
            throw TrustStoreError(.metadataMalformed, "\(label(Self.urlFile)): \(bytes.count) bytes exceeds the \(sizeLimit)-byte metadata limit")
        }
        let fetched = label(Self.urlFile) + " (fetched)"
        let signers = try TrustStore.metadataSigners(directory + TrustStore.metadataSignerFile, label: label(TrustStore.metadataSignerFile))
        let (entities, creationInstant) = try MetadataReader.document(bytes, label: fetched, signers: signers)
        // Each entity with the directory of the MVPD it speaks for (its allow-weak-keys file).
        let used: [(entity: MetadataEntity, directory: String)]
        if isAggregate {
            let mapping = try TrustStore.readMetadataMap(directory + TrustStore.metadataMapFile)
            used = try TrustStore.resolve(mapping, in: entities).map { ($0.value, directory + $0.key + "/") }
        } else {
            used = [(try TrustStore.single(entities, label: fetched), directory)]
        }
        let plainHTTP = url.scheme?.lowercased() == "http"
        for (entity, entityDirectory) in used {
            let allowWeak = FileManager.default.fileExists(atPath: entityDirectory + TrustStore.allowWeakKeysFile)
            _ = try TrustStore.keys(of: entity, label: fetched, allowWeak: allowWeak)
            if plainHTTP && entity.validUntil == nil {
                // Over plain HTTP the signature is all that protects the keys, and it never
                // expires: without validUntil, anyone on the path could serve an old signed copy
                // (keys since rotated out, perhaps compromised) for ever.
                throw TrustStoreError(
                    .metadataMalformed, "\(fetched): entity \(entity.entityID) has no validUntil; metadata fetched over http:// must carry one")
            }
            if let validUntil = entity.validUntil, validUntil <= now {
                throw TrustStoreError(.metadataExpired, "\(fetched): entity \(entity.entityID) passed its validUntil \(validUntil.ISO8601Format())")
            }
        }
        return MetadataPublication(entities: used.map(\.entity), creationInstant: creationInstant)
    }

    /// The order of the last good copy, the one in use (also after a restart, which loads it):
    /// what a fetched copy may not be older than. `nil` when there is none, or when it would no
    /// longer load (its pinned signer was changed): a copy that is not trusted orders nothing.
    /// Its expiry is not checked here: an expired copy is older than any copy that may load.
    public func cachedPublication() -> MetadataPublication? {
        guard let data = FileManager.default.contents(atPath: cachePath) else { return nil }
        return try? check(Array(data), now: .distantPast)
    }
}

// MARK: - MetadataPublication

/// What tells two signed copies of one metadata source apart in time, so that a fetched copy
/// older than the one in use is refused instead of bringing back keys the publisher retired.
///
/// A signature proves who published a document, not when: anyone who kept an old signed copy
/// (a stale mirror or CDN node, anyone on the path of an `http://` source) can serve it again
/// until its `validUntil`. SAML metadata has no standard issue instant, so the order is read
/// from what the publisher signed:
///
/// - the `creationInstant` of `mdrpi:PublicationInfo` on the root, when both copies carry one
///   and they differ: the publisher's own statement of which came first, so it decides (a
///   newer publication may shorten `validUntil`);
/// - otherwise `validUntil` (the earliest the trust store applies to the entities it takes):
///   an earlier one than the copy in use is older, and so is none at all after a copy that had
///   one; with the same `validUntil`, a copy whose entities and keys differ cannot be shown to
///   be newer and is refused too (one that differs only in bytes, a re-signature, is not);
/// - with no `validUntil` on the copy in use there is nothing to order by, and the fetched copy
///   is taken (an `http://` source always has one: ``MetadataSource/check(_:now:)`` requires it).
public struct MetadataPublication: Sendable, Equatable {
    /// The earliest `validUntil` of the entities taken; `nil` when one of them has none.
    public let validUntil: Date?
    /// `mdrpi:PublicationInfo/@creationInstant` of the root, when it has one.
    public let creationInstant: Date?
    /// The entities taken and their signing certificates: what replacing the copy changes.
    let trusted: [String: Set<String>]

    init(entities: [MetadataEntity], creationInstant: Date?) {
        var validUntil: Date?
        var bounded = true
        for entity in entities {
            guard let until = entity.validUntil else {
                bounded = false
                continue
            }
            validUntil = validUntil.map { min($0, until) } ?? until
        }
        self.validUntil = bounded ? validUntil : nil
        self.creationInstant = creationInstant
        var trusted: [String: Set<String>] = [:]
        for entity in entities { trusted[entity.entityID, default: []].formUnion(entity.signingCertificates) }
        self.trusted = trusted
    }

    /// Why this copy, fetched, may not replace `current`, the copy in use; `nil` when it may.
    public func rollback(from current: MetadataPublication) -> String? {
        if let created = creationInstant, let currentCreated = current.creationInstant, created != currentCreated {
            guard created < currentCreated else { return nil }
            return "published \(created.ISO8601Format()), before the copy in use (\(currentCreated.ISO8601Format()))"
        }
        guard let currentUntil = current.validUntil else { return nil }
        guard let until = validUntil else {
            return "it has no validUntil; the copy in use is valid until \(currentUntil.ISO8601Format())"
        }
        if until < currentUntil {
            return "valid until \(until.ISO8601Format()), before the copy in use (\(currentUntil.ISO8601Format()))"
        }
        if until == currentUntil && trusted != current.trusted {
            return "the same validUntil as the copy in use (\(until.ISO8601Format())) with other entities or keys: not shown to be newer"
        }
        return nil
    }
}
