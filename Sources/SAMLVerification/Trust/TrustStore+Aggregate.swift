import Foundation

extension TrustStore {
    /// What the aggregate gives one mapped MVPD: its entity, or none yet when the aggregate is
    /// fetched and no good copy exists.
    struct AggregateMember {
        var entity: MetadataEntity?
        /// The file its keys are named after (`metadata.xml`, or the fetched copy).
        var label: String
        /// ``IdentityProviderTrust/source``: `aggregate` or `remote-aggregate`.
        var kind: String
        /// The aggregate's URL when it is fetched.
        var source: MetadataSource?
        /// Why the fetched copy could not be used (see ``IdentityProviderTrust/cachedCopyProblem``).
        var problem: String?
    }

    /// The aggregate as read: MVPD id → member, and its ``MetadataSource`` when it is fetched.
    struct Aggregate {
        var members: [String: AggregateMember] = [:]
        var source: MetadataSource?
    }

    /// `<directory>/metadata.xml` (an aggregate) — or, with `<directory>/metadata.url`, its last
    /// good fetched copy — read through `<directory>/metadata.map`. Empty when there is none.
    ///
    /// The map is the operator's decision of which federation entity speaks for which MVPD;
    /// nothing is trusted because it merely appears in the aggregate.
    static func loadAggregate(_ base: URL, cache: String?) throws(TrustStoreError) -> Aggregate {
        let fm = FileManager.default
        let localPath = base.appendingPathComponent(metadataFile).path
        let mapPath = base.appendingPathComponent(metadataMapFile).path
        let remote = try MetadataSource.read(directory: base.path + "/", mvpd: nil, cache: cache)
        let hasLocal = fm.fileExists(atPath: localPath), hasMap = fm.fileExists(atPath: mapPath)
        if hasLocal && remote != nil {
            throw TrustStoreError(.metadataSourceInvalid, "the store has both \(metadataFile) and \(MetadataSource.urlFile); keep one")
        }
        guard hasLocal || remote != nil || hasMap else { return Aggregate() }
        guard (hasLocal || remote != nil) && hasMap else {
            throw TrustStoreError(
                .metadataEntityMissing,
                hasMap
                    ? "metadata.map has no metadata.xml or metadata.url (the aggregate) beside it"
                    : "an aggregate (metadata.xml or metadata.url) needs metadata.map (lines '<mvpd> <entityID>') beside it")
        }
        let mapping = try readMetadataMap(mapPath)
        let signers = try metadataSigners(base.appendingPathComponent(metadataSignerFile).path, label: metadataSignerFile)
        guard let remote else {
            let entities = try MetadataReader.read(path: localPath, label: metadataFile, limit: MetadataReader.aggregateFileLimit, signers: signers)
            var aggregate = Aggregate()
            for (mvpd, entity) in try resolve(mapping, in: entities) {
                aggregate.members[mvpd] = AggregateMember(entity: entity, label: metadataFile, kind: "aggregate")
            }
            return aggregate
        }
        // A fetched aggregate: its last good copy, or none yet. A copy that no longer loads (the
        // pinned signer changed, the map names an entity it lacks) leaves its MVPDs waiting for
        // the next fetch, as for an MVPD's own fetched metadata.
        let label = "\(MetadataSource.urlFile) (cached copy)"
        var resolved: [String: MetadataEntity] = [:]
        var problem: String?
        if remote.hasCachedCopy {
            do {
                let entities = try MetadataReader.read(
                    path: remote.cachePath, label: label, limit: MetadataReader.aggregateFileLimit, signers: signers)
                resolved = try resolve(mapping, in: entities)
            } catch {
                problem = error.description
            }
        }
        var aggregate = Aggregate(source: remote)
        for (mvpd, _) in mapping {
            aggregate.members[mvpd] = AggregateMember(
                entity: resolved[mvpd], label: label, kind: "remote-aggregate", source: remote, problem: problem)
        }
        return aggregate
    }

    /// The lines `<mvpd> <entityID>` of the mapping file at `path`, in order; blank lines and
    /// lines starting with `#` are skipped. An MVPD mapped twice is refused.
    static func readMetadataMap(_ path: String) throws(TrustStoreError) -> [(mvpd: String, entityID: String)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw TrustStoreError("cannot read \(path)")
        }
        var mapping: [(mvpd: String, entityID: String)] = []
        var seen: Set<String> = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count == 2 else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map line \(number + 1): expected '<mvpd> <entityID>'")
            }
            let mvpd = String(words[0]), entityID = String(words[1])
            guard !mvpd.hasPrefix("."), !mvpd.contains("/") else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map line \(number + 1): \(mvpd) is not an MVPD id")
            }
            guard seen.insert(mvpd).inserted else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map line \(number + 1): \(mvpd) is mapped twice")
            }
            mapping.append((mvpd, entityID))
        }
        return mapping
    }

    /// MVPD id → the entity the mapping names for it. An aggregate listing a mapped `entityID`
    /// twice is refused: which of the two speaks for the MVPD would be an accident of order.
    static func resolve(
        _ mapping: [(mvpd: String, entityID: String)], in entities: [MetadataEntity]
    ) throws(TrustStoreError) -> [String: MetadataEntity] {
        var byID: [String: [MetadataEntity]] = [:]
        for entity in entities { byID[entity.entityID, default: []].append(entity) }
        var resolved: [String: MetadataEntity] = [:]
        for (mvpd, entityID) in mapping {
            guard let found = byID[entityID] else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map: \(mvpd): the aggregate has no entity \(entityID)")
            }
            guard found.count == 1 else {
                throw TrustStoreError(.metadataMalformed, "the aggregate holds entity \(entityID) (mapped to \(mvpd)) \(found.count) times")
            }
            resolved[mvpd] = found[0]
        }
        return resolved
    }
}
