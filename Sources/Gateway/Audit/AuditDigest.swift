import Crypto
import SAMLEncoding
import SAMLVerification

/// The digest an audit line names an assertion by, in lower-case hex.
enum AuditDigest {
    /// The `assertion` of an audit line: the hex SHA-256 of the assertion's replay key (its signed
    /// issuer and ID), the same digest the shared replay store keys Redis with
    /// (``SharedReplayStore/key(for:digest:)``), so a line and a replay record can be matched.
    static func assertion(_ claim: ReplayClaim) -> String {
        HexDigits.lowercase(SHA256.hash(data: Array(claim.key.utf8)))
    }
}
