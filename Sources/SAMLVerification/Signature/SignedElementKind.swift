/// Which element(s) carried a verified signature.
public enum SignedElementKind: String, Sendable, Hashable {
    case response
    case assertion
    case both
}
