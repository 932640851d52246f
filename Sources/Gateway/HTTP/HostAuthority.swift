/// A `host[:port]` as the gateway accepts it in `Host` and in an absolute-form target (RFC 9112
/// §3.2, RFC 3986 §3.2.2): a registered name or IPv4 address of letters, digits, `-`, `.`, `_`
/// and `~`, or an IPv6 address in brackets (hex digits, `:` and `.`), then optionally `:` and a
/// port of 1 to 5 digits no greater than 65535.
///
/// Stricter than RFC 3986's `reg-name` (no escapes, no sub-delimiters such as `,` or `;`): the
/// value is copied into `X-Forwarded-Host`, where a backend building URLs from it, or reading
/// it as a list, must find one plain host. One pass over at most ``maximumLength`` bytes.
enum HostAuthority {
    /// A DNS name is at most 253 bytes; with a port, 262 is ample.
    static let maximumLength = 262

    static func isValid(_ value: String.UTF8View) -> Bool {
        guard !value.isEmpty, value.count <= maximumLength else { return false }
        var rest = value[...]
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let address = rest[rest.index(after: rest.startIndex)..<close]
            guard address.contains(UInt8(ascii: ":")), address.allSatisfy({ ipv6Characters[Int($0)] }) else { return false }
            rest = rest[rest.index(after: close)...]
        } else {
            let end = rest.firstIndex(of: UInt8(ascii: ":")) ?? rest.endIndex
            let name = rest[..<end]
            guard !name.isEmpty, name.allSatisfy({ nameCharacters[Int($0)] }) else { return false }
            rest = rest[end...]
        }
        guard let colon = rest.first else { return true }
        let port = rest.dropFirst()
        guard colon == UInt8(ascii: ":"), (1...5).contains(port.count), port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return false
        }
        return port.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 65535
    }

    /// Bytes of a registered name or IPv4 address: RFC 3986 `unreserved`.
    private static let nameCharacters: [Bool] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Bytes of an IPv6 address in brackets (an embedded IPv4 tail included).
    private static let ipv6Characters: [Bool] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
