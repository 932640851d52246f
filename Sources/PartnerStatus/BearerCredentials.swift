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
