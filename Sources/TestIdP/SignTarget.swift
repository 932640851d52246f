/// Which element(s) the test IdP signs. `.none` produces an unsigned response (for tests).
public enum SignTarget: String, Sendable, CaseIterable {
    case response
    case assertion
    case both
    case none
}
