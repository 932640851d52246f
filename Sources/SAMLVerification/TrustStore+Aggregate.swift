import Foundation

extension TrustStore {
    /// `<directory>/metadata.xml` (an aggregate) read through `<directory>/metadata.map`:
    /// MVPD id → its entity. Empty when there is no aggregate.
    ///
    /// The map is the operator's decision of which federation entity speaks for which MVPD;
    /// nothing is trusted because it merely appears in the aggregate. Each line is
    /// `<mvpd> <entityID>`; blank lines and lines starting with `#` are skipped.
    static func loadAggregate(_ base: URL) throws(TrustStoreError) -> [String: MetadataEntity] {
        let fm = FileManager.default
        let aggregatePath = base.appendingPathComponent("metadata.xml").path
        let mapPath = base.appendingPathComponent("metadata.map").path
        let hasAggregate = fm.fileExists(atPath: aggregatePath), hasMap = fm.fileExists(atPath: mapPath)
        guard hasAggregate || hasMap else { return [:] }
        guard hasAggregate && hasMap else {
            throw TrustStoreError(.metadataEntityMissing, hasAggregate
                ? "metadata.xml (an aggregate) needs metadata.map (lines '<mvpd> <entityID>') beside it"
                : "metadata.map has no metadata.xml (the aggregate) beside it")
        }
        guard let text = try? String(contentsOfFile: mapPath, encoding: .utf8) else {
            throw TrustStoreError("cannot read \(mapPath)")
        }
        let signers = try metadataSigners(base.appendingPathComponent(metadataSignerFile).path, label: metadataSignerFile)
        let entities = try MetadataReader.read(path: aggregatePath, label: "metadata.xml", limit: MetadataReader.aggregateFileLimit,
                                               signers: signers)
        var byID: [String: MetadataEntity] = [:]
        for entity in entities where byID[entity.entityID] == nil {
            byID[entity.entityID] = entity
        }
        var mapped: [String: MetadataEntity] = [:]
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
            guard mapped[mvpd] == nil else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map line \(number + 1): \(mvpd) is mapped twice")
            }
            guard let entity = byID[entityID] else {
                throw TrustStoreError(.metadataEntityMissing, "metadata.map line \(number + 1): metadata.xml has no entity \(entityID)")
            }
            mapped[mvpd] = entity
        }
        return mapped
    }
}
