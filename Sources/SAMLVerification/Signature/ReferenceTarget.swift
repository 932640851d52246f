/// What the single `Reference` of a signature points at, as ``SignedInfoPrecheck`` read it.
enum ReferenceTarget: Equatable {
    /// `URI="#id"`: the element the signature is a direct child of.
    case element
    /// `URI=""`: the whole document, with the enveloped-signature transform removing the
    /// signature itself. Allowed only for a signature that is a direct child of the document
    /// element (the Response), which is then what it signs — the Assertion and everything else
    /// in the document included.
    case wholeDocument
}
