import Crypto
import Foundation
import SAMLEncoding
import SAMLVerification
import ServerSupport

/// What a worker adds to a verified exchange for its audit line, when there is an audit trail:
/// the assertion's digest and, with a key, the subject's pseudonym. Computed on the worker, so
/// the NameID never leaves it (``PreparedExchange`` carries only the HMAC) and the event loop
/// does no hashing.
struct ExchangeAudit: Sendable {
    let key: AuditKey?

    /// The `assertion` and `subject` of the line (``AuditRecord``).
    func facts(of response: VerifiedResponse) -> (assertion: String?, subject: String?) {
        (response.replayClaim.map(AuditDigest.assertion), response.nameID.flatMap { key?.subject(of: $0) })
    }
}

/// The digest an audit line names an assertion by, in lower-case hex.
enum AuditDigest {
    /// The `assertion` of an audit line: the hex SHA-256 of the assertion's replay key (its signed
    /// issuer and ID), the same digest the shared replay store keys Redis with
    /// (``SharedReplayStore/key(for:digest:)``), so a line and a replay record can be matched.
    static func assertion(_ claim: ReplayClaim) -> String {
        HexDigits.lowercase(SHA256.hash(data: Array(claim.key.utf8)))
    }
}

/// The operator's key that turns a NameID into the audit trail's `subject`: a keyed hash
/// (HMAC-SHA256), so the trail can tell one user's exchanges from another's and an operator
/// holding the key can check whether a given NameID is among them, while the file alone names
/// nobody. A hash without a key would not do: NameIDs are few enough (e-mail addresses, account
/// numbers) to be guessed and hashed one by one.
///
/// Never printed: errors name the setting, not the key.
package struct AuditKey: Sendable {
    /// The variable that may hold the key itself (`audit-key-file` wins when both are set).
    package static let environmentName = "SAMLGATE_AUDIT_KEY"
    /// The shortest key accepted: the HMAC's own output size, below which the key is the weak part.
    package static let minimumBytes = 32
    /// A key file larger than this is not a key.
    static let maximumFileBytes = 4096

    /// The key's bytes (swift-crypto's `SymmetricKey` is not `Sendable`: one is made per use).
    private let bytes: [UInt8]

    /// - Parameters:
    ///   - bytes: the key as given; one trailing line break (the editor's) is not part of it.
    ///   - source: where it came from, for the error (`audit-key-file /run/secrets/audit-key`).
    package init(bytes: some Collection<UInt8>, source: String) throws(ConfigurationError) {
        var bytes = Array(bytes)
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        }
        guard bytes.count >= Self.minimumBytes else {
            throw ConfigurationError("\(source): the audit key is \(bytes.count) bytes; at least \(Self.minimumBytes) are needed")
        }
        self.bytes = bytes
    }

    /// The key in the file at `path`.
    package init(file path: String) throws(ConfigurationError) {
        let source = "\(GatewaySetting.auditKeyFile.rawValue) \(path)"
        guard let data = FileManager.default.contents(atPath: path), data.count <= Self.maximumFileBytes else {
            throw ConfigurationError("\(source): cannot be read (or is over 4 KiB)")
        }
        try self.init(bytes: data, source: source)
    }

    /// The `subject` of an audit line: hex HMAC-SHA256 of the NameID's UTF-8 under this key.
    /// The same NameID gives the same subject for as long as the key stays.
    package func subject(of nameID: String) -> String {
        HexDigits.lowercase(HMAC<SHA256>.authenticationCode(for: Array(nameID.utf8), using: SymmetricKey(data: bytes)))
    }
}
