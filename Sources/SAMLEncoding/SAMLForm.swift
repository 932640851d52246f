/// The shape in which a `SAMLResponse` value arrives.
///
/// Clients send the VSA response raw, base64-encoded, or already in the cookbook's final form.
/// Knowing which lets us bring every one of them to the cookbook form exactly once — never
/// encoding an encoded value a second time.
public enum SAMLForm: String, Sendable, CaseIterable {
    /// XML text: the first byte that is neither whitespace nor a byte-order mark is `<`.
    case raw
    /// Base64 (standard alphabet, padded) of XML, not percent-encoded.
    case base64
    /// The cookbook's value: base64 of XML with `+`, `/`, `=` percent-encoded.
    case encoded
}
