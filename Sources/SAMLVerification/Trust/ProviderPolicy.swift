import Foundation

/// One MVPD's own verification policy, over the gateway's settings: the trust-store entry's
/// `policy` file, `key: value` lines (`#` starts a comment). IdPs differ — one's clock runs
/// late, one still signs with SHA-1, one names another audience — and one setting for all would
/// loosen every MVPD for the sake of one.
///
/// Keys: `skew` (seconds, 0…3600), `audience`, `max-assertion-lifetime` (seconds, 1…31536000:
/// an assertion still acceptable longer than this after it is verified is refused,
/// `validity_too_long`), `allow-sha1` and `allow-inclusive-c14n` (`true` or `false`),
/// `forward-form` (`cookbook` or `signature-preserving`). An unknown key or a bad value stops the
/// load, naming the line: a typo must not leave an MVPD on a looser default.
public struct ProviderPolicy: Sendable, Equatable {
    public var skew: TimeInterval?
    public var audience: String?
    public var maxAssertionLifetime: TimeInterval?
    public var allowSHA1: Bool?
    public var allowInclusiveCanonicalization: Bool?
    /// What is forwarded when normalization breaks the signature (the gateway's `forward-form`).
    public var forwardForm: NormalizationFallback?

    public init() {}

    /// No key set: the gateway's settings apply unchanged.
    public var isEmpty: Bool { self == ProviderPolicy() }

    /// The policy file's name in an MVPD's directory.
    static let fileName = "policy"
    /// A policy file is a few lines; anything larger is not one.
    static let maximumFileBytes = 4096

    /// Reads `path`; `nil` when there is no such file.
    static func read(_ path: String, entry: String) throws(TrustStoreError) -> ProviderPolicy? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), data.count <= maximumFileBytes,
            let text = String(data: data, encoding: .utf8)
        else {
            throw TrustStoreError("trust store entry \(entry): cannot read its policy file (at most \(maximumFileBytes) bytes of UTF-8)")
        }
        var policy = ProviderPolicy()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?.trimmingCharacters(in: .whitespaces) ?? ""
            guard !line.isEmpty else { continue }
            func bad(_ expected: String) -> TrustStoreError {
                TrustStoreError("trust store entry \(entry): policy line \(index + 1): \(expected)")
            }
            guard let colon = line.firstIndex(of: ":") else { throw bad("expected key: value") }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            func flag() throws(TrustStoreError) -> Bool {
                switch value {
                case "true": return true
                case "false": return false
                default: throw bad("\(key) must be true or false")
                }
            }
            switch key {
            case "skew":
                guard let seconds = Double(value), seconds >= 0, seconds <= 3600 else { throw bad("skew must be seconds in 0...3600") }
                policy.skew = seconds
            case "audience":
                guard !value.isEmpty else { throw bad("audience must be a URI") }
                policy.audience = value
            case "max-assertion-lifetime":
                guard let seconds = Double(value), seconds >= 1, seconds <= 31_536_000 else {
                    throw bad("max-assertion-lifetime must be seconds in 1...31536000")
                }
                policy.maxAssertionLifetime = seconds
            case "allow-sha1": policy.allowSHA1 = try flag()
            case "allow-inclusive-c14n": policy.allowInclusiveCanonicalization = try flag()
            case "forward-form":
                switch value {
                case "cookbook": policy.forwardForm = .equivalentTree
                case "signature-preserving": policy.forwardForm = .original
                default: throw bad("forward-form must be cookbook or signature-preserving")
                }
            default:
                throw bad(
                    "unknown key \"\(key.prefix(40))\" (skew, audience, max-assertion-lifetime, allow-sha1, allow-inclusive-c14n, forward-form)")
            }
        }
        return policy
    }
}
