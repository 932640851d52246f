import NIOHTTP1
import ServerSupport

/// What a request head must be before it is routed, and what it says about how its body and
/// its answer are framed.
extension HTTPRequestHead {
    /// HTTP/1.0 (or older): no chunked bodies, no interim answers, no keep-alive unless asked.
    var predatesHTTP11: Bool {
        version.major < 1 || (version.major == 1 && version.minor == 0)
    }

    /// The client waits for `100 Continue` before it sends its body (HTTP/1.1's `Expect`; an
    /// HTTP/1.0 client cannot take an interim answer).
    var expectsContinue: Bool {
        !predatesHTTP11 && headers["expect"].contains { HTTPFieldValue.equalsIgnoringCase($0, "100-continue") }
    }

    /// No transfer coding but `chunked`: the gateway forwards bodies chunked or by length, and a
    /// coding it dropped on the way (`gzip, chunked`) would reach the backend unannounced.
    var hasPlainFraming: Bool {
        let codings = headers["transfer-encoding"]
        return codings.isEmpty || (codings.count == 1 && HTTPFieldValue.equalsIgnoringCase(codings[0], "chunked"))
    }

    /// Whether the request announces a body (a chunked one, or a `Content-Length` above 0);
    /// read once per request, as ``InFlightRequest/hasBody``.
    var announcesBody: Bool {
        headers.contains(name: "transfer-encoding") || (contentLength ?? 0) > 0
    }

    /// The body length `Content-Length` announces. The parser has framed the body by it (digits,
    /// one value) but hands the value over with the blanks that may follow it (`5 `): read
    /// without them, as the parser read it, and forwarded as this number — a value read
    /// otherwise would announce a body the gateway then never forwards.
    var contentLength: Int? {
        guard let value = headers.first(name: "content-length") else { return nil }
        let digits = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }.prefix { $0 != 0x20 && $0 != 0x09 }
        return Int(Substring(digits))
    }

    /// The version of the answer: the client's own when it predates HTTP/1.1, else HTTP/1.1.
    var answerVersion: HTTPVersion { predatesHTTP11 ? version : .http1_1 }

    /// What the fields of a head say before it is routed, read in one pass over them.
    struct FieldCheck {
        /// The first `Host` value.
        var host: String?
        /// The head asks to change protocols (`Upgrade`) or is a `CONNECT`: HTTP/1.1's parser
        /// stops reading the connection after such a request, so it is the connection's last.
        var endsConnection: Bool
    }

    /// The checks every head passes (RFC 9112 §3.2, RFC 9110 §5.5): one `Host`, present on
    /// HTTP/1.1, a plain `host[:port]` (``HostAuthority``); no header value with bytes that are
    /// not UTF-8 (the parser hands them over as U+FFFD, and the gateway forwards nothing but the
    /// client's bytes: such a value is refused, never rewritten); at most
    /// ``ProxyHeaders/maximumConnectionTokens`` names in `Connection`.
    func checkFields() throws(GatewayError) -> FieldCheck {
        var hosts = 0
        var check = FieldCheck(host: nil, endsConnection: method == .CONNECT)
        for (name, value) in headers {
            if Self.isName(name, "host") {
                hosts += 1
                if check.host == nil { check.host = value }
            } else if Self.isName(name, "upgrade") {
                check.endsConnection = true
            }
            if Self.holdsReplacementCharacter(value) {
                throw GatewayError(
                    status: 400, code: .invalidRequest,
                    message: "the header \(Self.displayName(name)) holds bytes that are not UTF-8, which the gateway does not forward",
                    details: [("header", .string(Self.displayName(name)))])
            }
        }
        if hosts > 1 {
            throw GatewayError(
                status: 400, code: .duplicateHeader, message: "the header Host is given more than once", details: [("header", .string("Host"))])
        }
        if hosts == 0 && !predatesHTTP11 {
            throw GatewayError(
                status: 400, code: .invalidRequest, message: "an HTTP/1.1 request must carry Host", details: [("header", .string("Host"))])
        }
        if let host = check.host, !HostAuthority.isValid(host.utf8) {
            throw GatewayError(
                status: 400, code: .invalidRequest, message: "the header Host must be host[:port]", details: [("header", .string("Host"))])
        }
        if let refusal = ProxyHeaders.connectionRefusal(headers) { throw refusal }
        return check
    }

    /// Whether a field name is `lowercased` (ASCII letters in any case).
    private static func isName(_ name: String, _ lowercased: StaticString) -> Bool {
        name.utf8.count == lowercased.utf8CodeUnitCount && HTTPFieldValue.equalsIgnoringCase(name, lowercased)
    }

    /// Whether `value` holds U+FFFD (`EF BF BD`), which is what the parser made of bytes that
    /// are not UTF-8 (a client sending the character itself is refused alike). A scan for the
    /// byte `EF` in place, most values holding none: the check runs over every value of every
    /// request.
    private static func holdsReplacementCharacter(_ value: String) -> Bool {
        value.utf8.withContiguousStorageIfAvailable { bytes in
            guard var at = bytes.firstIndex(of: 0xEF) else { return false }
            while at + 2 < bytes.count {
                if bytes[at + 1] == 0xBF && bytes[at + 2] == 0xBD { return true }
                guard let next = bytes[(at + 1)...].firstIndex(of: 0xEF) else { return false }
                at = next
            }
            return false
        } ?? value.unicodeScalars.contains("\u{FFFD}")
    }

    /// A header name for a message: tokens only reach here (the parser refuses other bytes),
    /// bounded so a long name cannot make a long answer.
    private static func displayName(_ name: String) -> String {
        name.utf8.count <= 64 ? name : String(name.utf8.prefix(64))! + "…"
    }
}

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
