import Crypto
import Foundation
import SAMLEncoding
import SAMLVerification

/// Gives the subject of a token exchange's response a stable, opaque id (the gateway in front
/// has already verified the signature; the NameID is read where the gateway read it). The id is
/// a keyed hash with a key drawn per process, so it cannot be turned back into the NameID by
/// guessing; the NameID itself is not kept in the authentication (the raw exchange log of
/// `/reference/exchanges` does hold the responses as received — the reference upstream is a
/// stand-in for tests and demos, not a place for real subscribers' data).
enum SAMLSubject {
    /// 256 random bits per process (the system generator is cryptographically secure). Kept as
    /// bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so it cannot be a static.
    static let key: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }

    /// The hashed `NameID` of a response, `anonymous` when it has none or is not a response the
    /// verifier would read (the reference upstream also takes bare XML, for scripted tests).
    /// The NameID is the one the gateway verified, read from a parsed document (see
    /// ``SubjectReader``), never the first `NameID`-looking text: a comment such as
    /// `<!--<NameID>admin@victim.example<-->` before the Assertion must not pick the identity.
    static func userID(xml: [UInt8]) -> String {
        let name = xml.withUnsafeBytes { bytes in try? SubjectReader.nameID(bytes) }
        guard let name else { return "anonymous" }
        return userID(name: Array(name.utf8))
    }

    /// 16 hex digits of HMAC-SHA256(key, name).
    static func userID(name: [UInt8]) -> String {
        HexDigits.lowercase(HMAC<SHA256>.authenticationCode(for: name, using: SymmetricKey(data: key)).prefix(8))
    }
}
