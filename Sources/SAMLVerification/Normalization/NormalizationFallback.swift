/// What a verification for forwarding does when the IdP's signature verifies on the original
/// document but not on its cookbook normalization.
public enum NormalizationFallback: Sendable {
    /// Forward the normalized document only when it parses to the same tree as the verified
    /// original (``DocumentEquivalence``); otherwise refuse with `normalization_changes_document`.
    case equivalentTree
    /// Forward the original, verified document without normalization.
    case original
}
