/// The key types the test IdP generates.
public enum KeyAlgorithm: String, Sendable, CaseIterable {
    case rsa2048
    case p256
}
