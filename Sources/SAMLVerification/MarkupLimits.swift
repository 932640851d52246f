/// Limits on markup that costs libxml2 and canonicalization more than linear time, checked by
/// ``MarkupScanner`` before a document is parsed.
///
/// libxml2 2.9 checks an element's attributes for duplicates pairwise while parsing, and
/// namespace handling (declaration lookup, the canonicalizers' rendered-namespace stacks) grows
/// with the declarations in scope; an element with 100,000 attributes costs a minute of CPU
/// before any signature work. SAML responses carry a handful per element, so the defaults
/// leave an IdP ample room and an attacker none.
public struct MarkupLimits: Sendable, Equatable {
    /// Attributes on one element, namespace declarations not counted (`too_many_attributes`).
    public var attributesPerElement: Int = 64
    /// Namespace declarations (`xmlns`, `xmlns:p`) on one element (`too_many_namespaces`).
    public var namespaceDeclarationsPerElement: Int = 32
    /// Namespace declarations in scope at any element — on it and its ancestors
    /// (`too_many_namespaces`). libxml2 resolves every prefix by searching the declarations in
    /// scope, so this bounds the work per element, however deep the document.
    public var namespaceDeclarationsInScope: Int = 64

    public init() {}
}
