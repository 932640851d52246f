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
    public var namespaceDeclarationsInScope: Int = 32
    /// Markup items — elements, attributes, namespace declarations, comments, processing
    /// instructions, CDATA sections — at most one per this many bytes of the document on
    /// average, past ``markupItemAllowance`` (`too_many_nodes`). Every item costs each parse and
    /// canonicalization pass about the same, so this keeps the cost of a document proportional
    /// to its size at the density of real responses (one item per 50–200 bytes), not at the
    /// density an attacker can pack (`<e/>` is four bytes).
    public var bytesPerMarkupItem: Int = 32
    /// Items every document may have whatever its size.
    public var markupItemAllowance: Int = 1024

    /// The most markup items a document of `count` bytes may hold.
    public func markupItems(forByteCount count: Int) -> Int {
        markupItemAllowance + count / max(bytesPerMarkupItem, 1)
    }

    public init() {}
}
