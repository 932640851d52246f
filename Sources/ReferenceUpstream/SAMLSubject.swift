import Crypto
import Foundation

/// Reads the subject of a token exchange's response just far enough to give the user a stable,
/// opaque id (the gateway in front has already verified the signature). The id is a keyed hash
/// with a key drawn per process, so it cannot be turned back into the NameID by guessing; the
/// NameID itself is not kept in the authentication (the raw exchange log of
/// `/reference/exchanges` does hold the responses as received — the reference upstream is a
/// stand-in for tests and demos, not a place for real subscribers' data).
enum SAMLSubject {
    /// 256 random bits per process (the system generator is cryptographically secure). Kept as
    /// bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so it cannot be a static.
    static let key: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    static let hexDigits = Array("0123456789abcdef".utf8)

    /// The hashed `NameID` of a response, `anonymous` when it has none.
    static func userID(xml: [UInt8]) -> String {
        guard let text = nameIDText(xml) else { return "anonymous" }
        return userID(name: Array(text))
    }

    /// 16 hex digits of HMAC-SHA256(key, name).
    static func userID(name: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: name, using: SymmetricKey(data: key))
        let digits = hexDigits
        var hex: [UInt8] = []
        hex.reserveCapacity(16)
        for byte in mac.prefix(8) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The text after the first `NameID` start tag (any prefix), up to the next `<`. The first
    /// match in document order is a start tag: its end tag comes after it.
    static func nameIDText(_ xml: [UInt8]) -> ArraySlice<UInt8>? {
        let marker = Array("NameID".utf8)
        guard xml.count > marker.count + 1 else { return nil }
        let text: Range<Int>? = xml.withUnsafeBufferPointer { xml in
            for index in 1..<(xml.count - marker.count) where xml[index] == marker[0] {
                let before = xml[index - 1], after = xml[index + marker.count]
                guard before == UInt8(ascii: "<") || before == UInt8(ascii: ":"),
                      after == UInt8(ascii: " ") || after == UInt8(ascii: ">"),
                      xml[index..<index + marker.count].elementsEqual(marker),
                      let close = xml[(index + marker.count)...].firstIndex(of: UInt8(ascii: ">")) else { continue }
                return (close + 1)..<(xml[(close + 1)...].firstIndex(of: UInt8(ascii: "<")) ?? xml.count)
            }
            return nil
        }
        return text.map { xml[$0] }
    }
}
