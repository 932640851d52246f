/// How far along the cookbook pipeline to go.
public enum CookbookStage: String, Sendable, CaseIterable {
    /// Whitespace-normalized UTF-8 (cookbook steps 1–3).
    case normalized
    /// Base64 of the normalized bytes (step 4).
    case base64
    /// Percent-encoded base64: the value the backend expects (step 5).
    case encoded
}
