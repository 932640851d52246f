/// What one fetch of a metadata source came to.
enum MetadataRefreshResult: String, Sendable, CaseIterable {
    /// A new copy, checked, cached, and the trust store reloaded with it.
    case updated
    /// The copy in use is still current (`304`, or the same bytes).
    case unchanged
    /// Any failure: the last good copy stays.
    case failed

    var succeeded: Bool { self != .failed }
}
