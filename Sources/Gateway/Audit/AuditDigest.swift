import Crypto
import SAMLVerification

/// The hashes an audit line carries, in lower-case hex.
enum AuditDigest {
    /// The `assertion` of an audit line: the hex SHA-256 of the assertion's replay key (its signed
    /// issuer and ID), the same digest the shared replay store keys Redis with
    /// (``SharedReplayStore/key(for:)``), so a line and a replay record can be matched.
    static func assertion(_ claim: ReplayClaim) -> String {
        hex(SHA256.hash(data: Array(claim.key.utf8)))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)
}
