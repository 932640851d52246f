import SAMLEncoding

/// The request target, parsed once, in the one spelling the gateway routes on and forwards.
///
/// Every layer behind the gateway (the HTTP client, a load balancer, the backend's framework)
/// may normalize a target its own way: decode `%61` to `a`, drop a `#fragment`, trim a trailing
/// dot or blank, treat `\` as `/`, resolve `..`, fold full-width letters. If the gateway routed
/// on one spelling and the backend on another, a token exchange could reach the backend without
/// being verified. So the target is brought to a canonical form here, anything whose meaning
/// could differ between parsers is refused with `400 invalid_request_target`, routes are
/// classified on the canonical path, and exactly the canonical target is forwarded.
///
/// Accepted (RFC 9112 §3.2.1 origin-form, RFC 3986 §3.3–3.4):
/// - the path starts with `/`; its segments hold ASCII letters, digits and
///   `- . _ ~ ! $ & ' ( ) * + , = : @`, and percent-escapes of printable ASCII other than
///   `/ \ % ? # ;`. Escapes of unreserved characters (`%61`) are decoded, the others kept with
///   upper-case hex (`%3d` → `%3D`): the canonical path is decoded at most once by anyone
///   (no `%25`), and then holds no separator the gateway did not see;
/// - no empty segment (`//`) except one trailing `/`; no segment ending in `.` (this refuses
///   `.`, `..` and `authn.`), none beginning or ending with an escaped blank;
/// - an optional query of the same characters plus `/ ? ;`, percent-escapes well formed,
///   decoding to valid UTF-8 without control characters, and not double-encoded (`%25` followed
///   by two hex digits), with no `SAMLResponse` parameter in any spelling (``ParameterName``);
///   forwarded as received.
///
/// An absolute-form target (`http://host/path`) is split first (``parse(requestLine:)``): its
/// path is parsed like any other, its authority stands in for `Host`.
///
/// Refused: asterisk- and authority-form; a fragment; `;` path parameters; backslash, control
/// characters, NUL and non-ASCII in the path, raw or escaped; an escaped `/`, `%`, `?` or `#`;
/// malformed escapes.
struct RequestTarget: Sendable, Equatable {
    /// The canonical path (see the type's description): nothing in it needs escaping.
    let path: String
    /// The query without its `?`, as received; `nil` when the target has no `?`.
    let query: String?

    /// What the upstream receives as its request target.
    var forwarded: String {
        guard let query else { return path }
        return path + "?" + query
    }

    /// A request line's target, origin-form or absolute-form (`http://host/path`; a server must
    /// accept the latter, RFC 9112 §3.2.2): the parsed target, and the authority that stands in
    /// for `Host` when the form is absolute. The authority must be a plain `host[:port]`
    /// (``HostAuthority``; no userinfo).
    static func parse(requestLine uri: String) throws(GatewayError) -> (target: RequestTarget, authority: String?) {
        // Origin-form, nearly every request: no scheme to look for.
        if uri.utf8.first == UInt8(ascii: "/") { return (try parse(uri), nil) }
        let scheme = uri.utf8.prefix(8).map { $0 | 0x20 }
        let schemeLength = scheme.starts(with: "http://".utf8) ? 7 : scheme.starts(with: "https://".utf8) ? 8 : 0
        guard schemeLength > 0 else { return (try parse(uri), nil) }
        let rest = uri.utf8.dropFirst(schemeLength)
        let end = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        let authority = String(Substring(rest[..<end]))
        guard HostAuthority.isValid(authority.utf8) else {
            throw refusal("the authority of an absolute-form target must be host[:port]")
        }
        let remainder = String(Substring(rest[end...]))
        let target = remainder.hasPrefix("/") ? remainder : "/" + remainder
        return (try parse(target), authority)
    }

    static func parse(_ target: String) throws(GatewayError) -> RequestTarget {
        var target = target
        let parsed = target.withUTF8 { bytes in Result { () throws(GatewayError) in try parse(bytes) } }
        return try parsed.get()
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(GatewayError) -> RequestTarget {
        guard let first = bytes.first else { throw refusal("the request target is empty") }
        guard first == UInt8(ascii: "/") else {
            throw refusal(
                first == UInt8(ascii: "*")
                    ? "asterisk-form targets (`*`) are not forwarded"
                    : "only origin-form targets (a path starting with `/`) are accepted")
        }
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?"))
        let pathEnd = queryStart ?? bytes.count
        let path = try canonicalPath(UnsafeBufferPointer(rebasing: bytes[..<pathEnd]))
        guard let queryStart else { return RequestTarget(path: path, query: nil) }
        let query = UnsafeBufferPointer(rebasing: bytes[(queryStart + 1)...])
        try checkQuery(query)
        return RequestTarget(path: path, query: String(decoding: query, as: UTF8.self))
    }

    /// Decodes the escapes of unreserved characters, upper-cases the hex digits of the others,
    /// and checks every segment.
    private static func canonicalPath(_ raw: UnsafeBufferPointer<UInt8>) throws(GatewayError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var segmentStart = 0
        var i = 0
        // Invariant: `out` is the canonical form of raw[..<i]; every completed segment in it was
        // checked; `segmentStart` is where the current segment begins in `out`.
        while i < raw.count {
            let byte = raw[i]
            if byte == UInt8(ascii: "/") {
                if i > 0 { try checkSegment(out, from: segmentStart, final: false) }
                out.append(byte)
                segmentStart = out.count
                i += 1
            } else if byte == UInt8(ascii: "%") {
                guard i + 2 < raw.count, let high = HexDigits.value(raw[i + 1]), let low = HexDigits.value(raw[i + 2]) else {
                    throw refusal("malformed percent-escape in the path")
                }
                let value = high << 4 | low
                switch pathEscapes[Int(value)] {
                case .decoded:
                    out.append(value)
                case .kept:
                    out.append(contentsOf: [UInt8(ascii: "%"), hexDigits[Int(high)], hexDigits[Int(low)]])
                case .refused:
                    throw refusal(
                        value == UInt8(ascii: "%")
                            ? "double-encoded path (`%25`)"
                            : "an escaped character that is not accepted in a path (`/`, `\\`, `?`, `#`, `;`, control or non-ASCII)")
                }
                i += 3
            } else {
                guard pathCharacters[Int(byte)] else {
                    throw refusal(
                        byte == UInt8(ascii: "#")
                            ? "a fragment (`#`) is not part of a request target"
                            : byte == UInt8(ascii: ";")
                                ? "path parameters (`;`) are not accepted"
                                : "a character that is not allowed in a path segment")
                }
                out.append(byte)
                i += 1
            }
        }
        try checkSegment(out, from: segmentStart, final: true)
        return String(decoding: out, as: UTF8.self)
    }

    /// An empty segment is only accepted last (a trailing `/`) or as the whole path (`/`); no
    /// segment ends with `.` or begins or ends with an escaped space (backends trim them).
    private static func checkSegment(_ out: [UInt8], from start: Int, final: Bool) throws(GatewayError) {
        guard start < out.count else {
            if final { return }
            throw refusal("empty path segment (`//`)")
        }
        if out[out.count - 1] == UInt8(ascii: ".") {
            throw refusal("a path segment ends with `.` (dot segments and trailing dots are not accepted)")
        }
        let space: [UInt8] = Array("%20".utf8)
        if out[start...].starts(with: space) || (out.count - start >= 3 && Array(out[(out.count - 3)...]) == space) {
            throw refusal("a path segment begins or ends with a blank")
        }
    }

    private static func checkQuery(_ query: UnsafeBufferPointer<UInt8>) throws(GatewayError) {
        var decoded: [UInt8] = []
        // The folded names of both passes of ``checkQueryNames(_:key:)``: one buffer, grown once.
        var key: [UInt8] = []
        var escaped = false
        var i = 0
        while i < query.count {
            let byte = query[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < query.count, let high = HexDigits.value(query[i + 1]), let low = HexDigits.value(query[i + 2]) else {
                    throw refusal("malformed percent-escape in the query")
                }
                let value = high << 4 | low
                if value == UInt8(ascii: "%"), i + 4 < query.count, HexDigits.value(query[i + 3]) != nil, HexDigits.value(query[i + 4]) != nil {
                    throw refusal("double-encoded query (`%25` followed by an escape)")
                }
                guard value >= 0x20 && value != 0x7F else { throw refusal("an escaped control character in the query") }
                decoded.append(value)
                escaped = escaped || value >= 0x80
                i += 3
                continue
            }
            guard queryCharacters[Int(byte)] else {
                throw refusal(
                    byte == UInt8(ascii: "#")
                        ? "a fragment (`#`) is not part of a request target"
                        : "a character that is not allowed in a query")
            }
            decoded.append(byte)
            i += 1
        }
        if escaped && String(validating: decoded, as: UTF8.self) == nil {
            throw refusal("the query's percent-escapes are not valid UTF-8")
        }
        try checkQueryNames(query, key: &key)
        // Parsers that decode the query before they split it read `a=%26SAMLResponse%3Dx` so.
        if decoded.count != query.count {
            try decoded.withUnsafeBufferPointer { decoded throws(GatewayError) in try checkQueryNames(decoded, key: &key) }
        }
    }

    /// No `SAMLResponse` in a query, in any spelling a parser reads as it (``ParameterName``;
    /// names split at `&` and `;`), also once the query is decoded: a backend that also takes
    /// the exchange by `GET`, or reads query parameters before the body, would read a response
    /// the gateway never verified. `key` is scratch space for the folded names.
    private static func checkQueryNames(_ query: UnsafeBufferPointer<UInt8>, key: inout [UInt8]) throws(GatewayError) {
        var start = 0
        while start < query.count {
            var end = start
            while end < query.count && query[end] != UInt8(ascii: "&") && query[end] != UInt8(ascii: ";") { end += 1 }
            var nameEnd = start
            while nameEnd < end && query[nameEnd] != UInt8(ascii: "=") { nameEnd += 1 }
            // A name of fewer bytes than `samlresponse` cannot fold to it (folding never lengthens).
            let name = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: query[start..<nameEnd]))
            if name.count >= 12, ParameterName.fold(encoded: name, into: &key), ParameterName.matches(key, "samlresponse") {
                throw refusal("a SAMLResponse parameter in the query (a token exchange carries it in the form body, once)")
            }
            start = end + 1
        }
    }

    /// The path of a raw request target, unparsed: an origin-form target as it is, the part after
    /// the authority of an absolute-form one. Only to choose a refusal's vocabulary (even for a
    /// target ``parse(requestLine:)`` refuses), never to route.
    static func pathPart(of uri: String) -> Substring {
        guard !uri.hasPrefix("/"), let scheme = uri.range(of: "://") else { return Substring(uri) }
        let rest = uri[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
    }

    private static func refusal(_ why: String) -> GatewayError {
        GatewayError(status: 400, code: .invalidRequestTarget, message: "invalid request target: \(why)")
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    enum PathEscape {
        /// An unreserved character: its escape means the character itself (RFC 3986 §6.2.2.2).
        case decoded
        /// Printable ASCII that is not unreserved: kept escaped (with upper-case hex).
        case kept
        /// Separators and anything a second decoding or a lenient parser could turn into
        /// structure: `/`, `\`, `%`, `?`, `#`, `;`, controls, DEL and non-ASCII.
        case refused
    }

    private static let pathEscapes: [PathEscape] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .decoded
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return .decoded
        case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: ";"):
            return .refused
        case 0x20...0x7E:
            return .kept
        default:
            return .refused
        }
    }

    /// Characters a canonical path segment may hold unescaped: RFC 3986 `pchar` without `%` and `;`.
    private static let pathCharacters = asciiAlphanumerics(and: "-._~!$&'()*+,=:@")

    /// A byte table: ASCII letters and digits, and the bytes of `extra`.
    private static func asciiAlphanumerics(and extra: String) -> [Bool] {
        (0..<256).map { value in
            let byte = UInt8(value)
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return extra.utf8.contains(byte)
            }
        }
    }

    /// Characters a query may hold unescaped: RFC 3986 `query` without `%` (checked apart).
    private static let queryCharacters: [Bool] = (0..<256).map { value in
        pathCharacters[value] || "/?;".utf8.contains(UInt8(value))
    }
}

/// ``RequestTarget`` parsing for the `request-target` fuzz target (`Fuzz/`,
/// docs/robustness.md). Not used by the data plane.
///
/// **Why it is here.** ``RequestTarget`` is internal to the gateway; the fuzz package sees only
/// public API. These functions call exactly the parsers the connection handler calls and return
/// the target it would forward, or `nil` when it would answer `invalid_request_target`.
@_spi(Fuzzing) public enum RequestTargetFuzzing {
    /// The forwarded target for the raw target bytes of a request line (origin-form parser).
    public static func forwarded(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        try? RequestTarget.parse(bytes).forwarded
    }

    /// The forwarded target and the authority for a request line's target (origin- or absolute-form).
    public static func forwarded(requestLine uri: String) -> (target: String, authority: String?)? {
        guard let (target, authority) = try? RequestTarget.parse(requestLine: uri) else { return nil }
        return (target.forwarded, authority)
    }
}
