import NIOHPACK
import NIOHTTP1
import ServerSupport

/// An HTTP/2 request's header block read as the HTTP/1.1 request the gateway forwards, at least
/// as strictly as nginx reads it. swift-nio-http2 has already refused what RFC 9113 makes a
/// stream error (connection-specific or upper-case fields, pseudo-headers missing, repeated or
/// out of place, CR/LF/NUL in values, SP or controls in pseudo-header values); what it lets
/// through and an HTTP/1.1 backend would read otherwise than the gateway did is refused here,
/// each with a message naming the field:
///
/// - `:method` a token (RFC 9110 §9.1): it becomes the upstream request line's first word.
/// - `:scheme` `http` or `https`; `:path` in origin form (`*` for `OPTIONS` only): an absolute
///   `:path` names an authority of its own beside `:authority`.
/// - One authority: `:authority`, or `host` when it is absent (RFC 9113 §8.3.1); both present
///   must agree, no userinfo. It is the one `Host` forwarded.
/// - `content-length` one decimal number, or a list of the same number (RFC 9110 §8.6), which is
///   forwarded as that one number with the body it frames. No sign, no blanks.
/// - The header list no larger than HTTP/1.1's for the same request (names and values,
///   ``maximumFieldBytes``): `431` beyond it.
///
/// `cookie` crumbs are joined with `; ` into one field (RFC 9113 §8.2.3), where the first one was.
extension HTTPRequestHead {
    /// What HTTP/1.1's parser accepts of a head's names and values (swift-nio's default).
    static let maximumFieldBytes = 80 * 1024

    /// - Parameter endStream: the HEADERS frame ended the stream: the request has no body.
    init(http2 fields: HPACKHeaders, endStream: Bool) throws(GatewayError) {
        var method: String?
        var scheme: String?
        var path: String?
        var authority: String?
        var host: String?
        var contentLength: Int?
        var cookies: [String] = []
        var cookieIndex: Int?
        var fieldBytes = 0
        var regular: [(String, String)] = []
        regular.reserveCapacity(fields.count)
        // The first slot is the Host, filled once the authority is known.
        regular.append(("host", ""))
        for (name, value, _) in fields {
            fieldBytes += name.utf8.count + value.utf8.count
            switch name {
            case ":method": method = value
            case ":scheme": scheme = value
            case ":path": path = value
            case ":authority": authority = value
            case "host":
                guard host == nil else { throw Self.malformed("Host is given more than once", field: "host") }
                host = value
            case "content-length":
                let length = try Self.contentLength(value)
                guard contentLength == nil || contentLength == length else {
                    throw Self.malformed("content-length is given twice with different values", field: "content-length")
                }
                contentLength = length
            case "cookie":
                if cookieIndex == nil {
                    cookieIndex = regular.count
                    regular.append(("cookie", ""))
                }
                cookies.append(value)
            default:
                regular.append((name, value))
            }
        }
        guard fieldBytes <= Self.maximumFieldBytes else {
            throw GatewayError(
                status: 431, code: .invalidRequest, message: "the request's header fields exceed \(Self.maximumFieldBytes) bytes",
                details: [("limit", .integer(Self.maximumFieldBytes))])
        }
        guard let method, Self.isToken(method) else { throw Self.malformed(":method must be a token", field: ":method") }
        guard let scheme, HTTPFieldValue.equalsIgnoringCase(scheme, "http") || HTTPFieldValue.equalsIgnoringCase(scheme, "https"),
            !scheme.utf8.contains(0x20)
        else { throw Self.malformed(":scheme must be http or https", field: ":scheme") }
        guard let path, path.utf8.first == UInt8(ascii: "/") || (path == "*" && method == "OPTIONS") else {
            throw Self.malformed(":path must be an absolute path (origin form)", field: ":path")
        }
        regular[0].1 = try Self.authority(authority, host: host)
        if let cookieIndex { regular[cookieIndex].1 = cookies.joined(separator: "; ") }
        let httpMethod = HTTPMethod(rawValue: method)
        if let contentLength {
            regular.append(("content-length", String(contentLength)))
        } else if !endStream {
            // A body of unknown length follows; it goes upstream chunked.
            if !Self.anticipatesNoBody(httpMethod) { regular.append(("transfer-encoding", "chunked")) }
        } else if !Self.anticipatesNoBody(httpMethod) {
            regular.append(("content-length", "0"))
        }
        self.init(version: HTTPVersion(major: 2, minor: 0), method: httpMethod, uri: path, headers: HTTPHeaders(regular))
    }

    /// The authority forwarded as `Host`: `:authority`, else `host`; both, they must agree.
    private static func authority(_ authority: String?, host: String?) throws(GatewayError) -> String {
        let pseudo = authority.flatMap { $0.isEmpty ? nil : $0 }
        guard let chosen = pseudo ?? host, !chosen.isEmpty else {
            throw malformed("an HTTP/2 request must carry :authority or Host", field: ":authority")
        }
        if let pseudo, let host, !equalIgnoringASCIICase(pseudo, host) {
            throw malformed(":authority and Host name different authorities", field: "host")
        }
        guard !chosen.utf8.contains(UInt8(ascii: "@")) else {
            throw malformed("the authority must not carry userinfo", field: pseudo == nil ? "host" : ":authority")
        }
        return chosen
    }

    /// One `content-length` field: digits, or a comma-separated list of the same digits.
    private static func contentLength(_ value: String) throws(GatewayError) -> Int {
        var length: Int?
        var valid = !value.isEmpty
        var elements = 0
        HTTPFieldValue.forEachElement(of: value) { element in
            elements += 1
            guard element.utf8.count <= 18, element.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(element),
                length == nil || length == number
            else {
                valid = false
                return false
            }
            length = number
            return true
        }
        // Blanks around the whole value, or an empty element, are not the grammar's.
        let bytes = value.utf8
        let commas = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: ",") ? 1 : 0) }
        let edges = bytes.first.map(isDigit) == true && bytes.last.map(isDigit) == true
        guard valid, edges, elements == commas + 1, let length else {
            throw malformed("content-length must be one decimal number", field: "content-length")
        }
        return length
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Methods whose requests carry no body unless they say so (as swift-nio-http2 reads them):
    /// no `content-length: 0` or chunked framing is made up for them.
    private static func anticipatesNoBody(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .DELETE, .CONNECT, .TRACE: true
        default: false
        }
    }

    /// RFC 9110 §5.6.2: `1*tchar`.
    static func isToken(_ value: String) -> Bool {
        !value.isEmpty
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                    UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
                    UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                    true
                default: false
                }
            }
    }

    private static func equalIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && zip(lhs.utf8, rhs.utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 && ($0 == $1 || isLetter($0)) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private static func malformed(_ message: String, field: String) -> GatewayError {
        GatewayError(status: 400, code: .invalidRequest, message: message, details: [("header", .string(field))])
    }
}
