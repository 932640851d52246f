// The REST API v2 request headers of the form `<scheme> <value>`, read as strictly as the backend
// reads them: `Authorization: Bearer …` and `AP-Device-Identifier: fingerprint …`.

/// `Authorization: Bearer <token>` as REST API v2 uses it: the scheme (any case), exactly one
/// space, and a token of RFC 6750's `b64token` characters (letters, digits, `-._~+/`, then `=`
/// padding only at the end), nothing else.
///
/// Shared by the gateway (which refuses any other spelling before it verifies and records a
/// response the backend would then refuse for the header) and the reference upstream, so the two
/// read the header the same way. A strict resolver (Spring's among them) refuses the spellings a
/// lenient prefix match would let through: a tab or a second space after the scheme, a comma,
/// bytes outside ASCII — and the gateway's HTTP parser would have turned those into U+FFFD on
/// the way, forwarding bytes the client never sent.
public enum BearerCredentials {
    /// The token, or `nil` when the value is not exactly `Bearer <b64token>`.
    public static func token(in value: String) -> Substring? {
        let scheme = "bearer "
        guard value.utf8.count > scheme.utf8.count, SchemePrefix.matches(value.utf8, scheme) else {
            return nil
        }
        let token = value.utf8.dropFirst(scheme.utf8.count)
        let body = token.prefix { $0 != UInt8(ascii: "=") }
        guard !body.isEmpty, body.allSatisfy(isTokenCharacter), token.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else {
            return nil
        }
        return Substring(token)
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}

/// `AP-Device-Identifier` as REST API v2 documents it: `<type> <identifier>`, the only type
/// `fingerprint`, the identifier the base64 of the app's stable device id.
///
/// Shared by the gateway (which refuses a malformed one before it verifies and records a
/// response the backend would then refuse for the header) and the reference upstream.
public enum DeviceIdentifierHeader {
    public static let name = "AP-Device-Identifier"

    /// `fingerprint` (any case), one space, then a non-empty identifier in base64 — the standard
    /// or the URL-safe alphabet, not both, `=` only as padding at the end (to a multiple of four)
    /// — and nothing after it: what a backend decoding it with a standard decoder accepts.
    public static func isWellFormed(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let type = "fingerprint "
        guard bytes.count > type.utf8.count, SchemePrefix.matches(bytes, type) else { return false }
        let identifier = bytes.dropFirst(type.utf8.count)
        let body = identifier.prefix { $0 != UInt8(ascii: "=") }
        let padding = identifier.count - body.count
        guard !body.isEmpty, padding <= 2, identifier.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else { return false }
        guard padding == 0 || identifier.count % 4 == 0 else { return false }
        let standard = body.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") }
        let urlSafe = body.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        return standard || urlSafe
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }
}

// MARK: - The scheme word

/// The scheme word and its one space at the start of a header value (`Bearer `, `fingerprint `),
/// compared as the headers' readers compare them: letters in any case, every other byte exactly
/// (folding all bytes with `| 0x20` would take a NUL for the space).
enum SchemePrefix {
    /// Whether `bytes` start with `lowercased`, which holds lower-case letters and other ASCII.
    static func matches<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ lowercased: String) -> Bool {
        var value = bytes.makeIterator()
        for expected in lowercased.utf8 {
            guard let byte = value.next() else { return false }
            let isLetter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(expected)
            guard isLetter ? byte | 0x20 == expected : byte == expected else { return false }
        }
        return true
    }
}
