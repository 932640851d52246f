import Foundation

// MARK: - VerificationOptions

/// Knobs of a ``Verifier``. The defaults are the gateway's production settings.
public struct VerificationOptions: Sendable {
    /// The audience every `AudienceRestriction` must name.
    public var audience: String = "https://saml.sp.auth.adobe.com"
    /// Allowed clock difference with the IdP, in seconds, for every time check.
    public var clockSkew: TimeInterval = 120
    /// Accept RSA-SHA1 / ECDSA-SHA1 signatures and SHA-1 digests (off: SHA-1 is broken).
    public var allowSHA1: Bool = false
    /// The longest an assertion may stay acceptable after it is verified (its acceptance bound
    /// minus now, beyond the clock skew), seconds; `nil` is no limit. Set per MVPD
    /// (``ProviderPolicy``).
    public var maxAssertionLifetime: TimeInterval?
    /// Accept inclusive C14N 1.0 and 1.1 (with or without comments) besides exclusive C14N, as
    /// `SignedInfo`'s canonicalization and as a `Reference` transform, and a `Reference` that
    /// names no canonicalization (XML Signature then applies inclusive C14N 1.0). Identity
    /// providers that sign this way are genuine; `false` restricts an MVPD to exclusive C14N
    /// named explicitly (`algorithm_not_allowed`), for an IdP known to use nothing else.
    /// Inclusive C14N is canonicalized by libxml2, never by samlgate's native canonicalizer.
    public var allowInclusiveCanonicalization: Bool = true
    /// Largest accepted document in bytes (`too_large`).
    public var maxSize: Int = 1 << 20
    /// Deepest accepted element nesting (`too_deep`), checked before parsing. SAML responses
    /// nest about ten levels; each level adds to the work per node of canonicalization (node-set
    /// membership walks the ancestors), so the default leaves ample room and no more. libxml2
    /// itself stops at 256 without `XML_PARSE_HUGE`, which is never used.
    public var maxDepth: Int = 32
    /// Attributes and namespace declarations per element and per document, checked before
    /// parsing (`too_many_attributes`, `too_many_namespaces`).
    public var markupLimits = MarkupLimits()
    /// When set, `Destination` / `Recipient` must equal it (`destination_mismatch`).
    public var expectedDestination: String?
    /// Canonicalize signed content with samlgate's own exclusive C14N for the two node-set
    /// shapes SAML signatures use (about 40 % fewer instructions per verification), leaving
    /// anything else to libxml2. A signature that fails this way is checked once more with
    /// libxml2's canonicalization before it is rejected (documents up to
    /// ``largeDocumentSize``), so a difference between the two can only cost time, never
    /// reject a genuine response. `false` uses libxml2 throughout.
    public var nativeCanonicalization: Bool = true
    /// Past this size the safety nets behind the native canonicalizer are off. Genuine responses
    /// are a few kilobytes; a large one is far more likely built to cost CPU, and the nets are
    /// what it would spend: past this size a signature that fails with native canonicalization
    /// is not checked again with libxml2's (differential fuzzing finds no document on which the
    /// two differ), and no trusted key signing `SignedInfo` is final (no full pass per key).
    public var largeDocumentSize: Int = 64 << 10

    public init() {}
}

// MARK: - MarkupLimits

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
