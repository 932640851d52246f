import NIOCore
import NIOHTTP1
import ServerSupport

/// Header handling of a forwarding proxy (RFC 9110 §7.6.1): hop-by-hop headers stay on their
/// hop, `Host` and `Content-Length` are the client library's to set, `X-Forwarded-*` are the
/// gateway's own account of the hop (see ``upstreamRequest(_:authority:peer:trusting:requestID:)``)
/// and `X-Request-Id` is added.
@_spi(Benchmarks) public enum ProxyHeaders {
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "trailers", "transfer-encoding", "upgrade", "http2-settings",
    ]

    /// Set by the gateway or the client library, never copied: `Host` and `Content-Length`
    /// follow the upstream URL and the body actually sent.
    /// `Expect` is answered by the gateway itself (it reads the body), so it is not passed on.
    /// `traceparent` and `tracestate` are the gateway's hop of the trace (``TraceContext``).
    static let replaced: Set<String> = ["host", "content-length", "x-request-id", "expect", "traceparent", "tracestate"]

    /// Headers that make some frameworks route a request to another path or method than its
    /// request line says (IIS URL Rewrite and Symfony read `X-Original-URL` / `X-Rewrite-URL`,
    /// method-override middlewares the others). The gateway classifies the request line only, so
    /// a pass-through carrying them could reach the exchange unverified: always dropped.
    static let routeOverrides: Set<String> = [
        "x-original-url", "x-rewrite-url", "x-http-method-override", "x-http-method", "x-method-override", "x-original-method",
    ]

    /// What is never copied from the client whatever its peer: ``hopByHop``, ``replaced`` and
    /// ``routeOverrides`` in one set.
    static let neverCopied: Set<String> = hopByHop.union(replaced).union(routeOverrides)
    /// ``neverCopied`` as bytes: the check every header of every request takes, with no
    /// lower-cased copy of the name and no hashing.
    static let neverCopiedNames = FoldedNames(neverCopied)
    /// ``hopByHop`` and `X-Request-Id` (the gateway's own): what an answer's head never passes on.
    static let neverAnswered = FoldedNames(hopByHop.union(["x-request-id"]))

    /// `bytes` equal `lower` (lower-case ASCII) but for the case of letters.
    static func equalFolded<S: Sequence<UInt8>>(_ bytes: S, _ lower: [UInt8]) -> Bool {
        var pattern = lower.makeIterator()
        for byte in bytes {
            guard let expected = pattern.next(), byte | 0x20 == expected else { return false }
        }
        return pattern.next() == nil
    }

    /// Other client claims about the hop (client address, scheme, host, original path), read by
    /// some backend or framework: Rails' `remote_ip` reads `Client-IP`, Rack's scheme
    /// `X-Forwarded-Scheme` and `X-Forwarded-Ssl`, CDNs and load balancers write `CF-Connecting-IP`,
    /// `True-Client-IP`, `X-Original-Host`, `X-Envoy-Original-Path`. Kept only from a trusted
    /// proxy. A rule, not a list, since every product names its own (``isHopClaim(_:)``): a name
    /// starting with one of these (ASCII, any case) ...
    static let hopClaimPrefixes: [[UInt8]] = [
        "x-forwarded", "forwarded", "x-original-", "x-real-", "x-remote-", "x-originating-", "x-envoy-", "x-client-",
    ].map { Array($0.utf8) }
    /// ... or ending with one of these (`Client-IP`, `X-Cluster-Client-IP`, `Fastly-Client-IP`,
    /// `X-ProxyUser-Ip`, `CF-Connecting-IPv6`, `X-Remote-Addr`) ...
    static let hopClaimSuffixes: [[UInt8]] = ["-ip", "-ipv6", "-addr"].map { Array($0.utf8) }
    /// ... or one of these.
    static let hopClaimNames: [[UInt8]] = ["x-host", "x-url-scheme", "x-scheme", "front-end-https", "x-arr-ssl"].map { Array($0.utf8) }

    /// Whether a header name is a hop claim (see ``hopClaimPrefixes``): compared on the name's
    /// bytes, ASCII letters folded, without allocating (this runs for every header of every
    /// pass-through request from an untrusted peer). The names reaching it hold only letters,
    /// digits, `-` and `_`, which `| 0x20` folds without confusion.
    static func isHopClaim(_ name: String.UTF8View) -> Bool {
        let count = name.count
        for prefix in hopClaimPrefixes where count >= prefix.count && equalFolded(name.prefix(prefix.count), prefix) { return true }
        for suffix in hopClaimSuffixes where count >= suffix.count && equalFolded(name.suffix(suffix.count), suffix) { return true }
        for exact in hopClaimNames where count == exact.count && equalFolded(name, exact) { return true }
        return false
    }

    /// The headers the gateway reads, rewrites or drops, and the exchange's own headers (taken
    /// from ``ExchangeAdmission``'s lists, so that a header the exchange comes to read is covered):
    /// with `allow-underscore-headers`, a header whose name reads as one of these once `_` is
    /// taken for `-` is still dropped (a backend folding `_` would read it as the real one).
    /// (Hop claims, `X-Forwarded-*` and `Forwarded` among them, too, by ``isHopClaim(_:)``.)
    static let shadowed: Set<String> = neverCopied.union(
        (ExchangeAdmission.exchangeHeaders + ExchangeAdmission.partnerHeaders).map { $0.lowercased() })

    /// The bytes of a header name forwarded as it is: ASCII letters, digits and `-`.
    static let plainNameBytes: [Bool] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// The most names a client's `Connection` may list (``connectionRefusal(_:)``). Clients list
    /// one to three (`keep-alive`, `close`, `Upgrade`, `TE`, `HTTP2-Settings`); the bound keeps
    /// the set of names built for every request small whatever the head holds.
    static let maximumConnectionTokens = 32

    /// `400 invalid_request` for a request whose `Connection` lists more than
    /// ``maximumConnectionTokens`` names: counted in one pass that stops past the bound.
    static func connectionRefusal(_ headers: HTTPHeaders) -> GatewayError? {
        let values = headers["connection"]
        guard !values.isEmpty, HTTPFieldValue.elementCount(of: values, limit: maximumConnectionTokens) > maximumConnectionTokens else {
            return nil
        }
        return GatewayError(
            status: 400, code: .invalidRequest, message: "Connection lists more than \(maximumConnectionTokens) names",
            details: [("header", .string("Connection"))])
    }

    /// The names listed in `Connection` (also hop-by-hop): one pass over the values' bytes.
    static func connectionTokens(_ values: [String]) -> ConnectionTokens {
        ConnectionTokens(values)
    }

    /// `bytes` with ASCII upper-case letters lowered, every other byte as it is.
    static func asciiLowercased(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            var index = 0
            for byte in bytes {
                buffer[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                index += 1
            }
            return index
        }
    }

    /// The request headers for the upstream.
    ///
    /// `X-Forwarded-For`, `X-Forwarded-Host` and `X-Forwarded-Proto` say what the gateway saw,
    /// not what the client claimed: from a peer outside `trustedProxies` the client's copies are
    /// dropped and replaced by the peer address, the request's authority and the scheme the
    /// client spoke to the gateway (`http`, or `https` on the TLS listener). From a trusted proxy, its `X-Forwarded-Host` and `X-Forwarded-Proto`
    /// are kept when present, and the peer is appended to its `X-Forwarded-For`. `Forwarded`
    /// (RFC 7239) is always dropped and never written: a second, unchecked account of the same
    /// hops would let a backend that prefers it be poisoned all the same. Other hop claims
    /// (``isHopClaim(_:)``) pass only from a trusted proxy; route overrides (``routeOverrides``) never.
    /// - Parameter peer: the TCP peer; `nil` (no address) adds no `X-Forwarded-For`.
    public static func upstreamRequest(
        _ fields: HTTPHeaders, authority: String?, peer: SocketAddress?, trusting trustedProxies: TrustedProxies, requestID: String
    ) -> HTTPHeaders {
        var dropped = 0
        return upstreamRequest(
            fields, authority: authority, peer: peer, trusting: trustedProxies, requestID: requestID, allowingUnderscores: false,
            droppedNames: &dropped)
    }

    /// The request headers for the upstream (see above), without names that hold anything but
    /// ASCII letters, digits and `-`.
    ///
    /// Rack, WSGI, CGI and Symfony read `X_Forwarded_For` as `X-Forwarded-For` (both become
    /// `HTTP_X_FORWARDED_FOR`), CGI environments of some servers (lighttpd, older Apache) turn
    /// any other character into `_` as well (`X.Forwarded.For`), and which copy wins is theirs to
    /// decide: a client's `X_Forwarded_For`, `X_Original_URL` or `AP_Partner_Framework_Status`
    /// would pass every check above made on the real name. So such a name is dropped (as nginx
    /// does by default), counted in `droppedNames`; with `allowingUnderscores` a name whose only
    /// other character is `_` is kept, unless it reads as a header in ``shadowed``. The check is
    /// one byte scan of the name.
    /// - Parameter scheme: what `X-Forwarded-Proto` says when the gateway writes it.
    static func upstreamRequest(
        _ fields: HTTPHeaders, authority: String?, peer: SocketAddress?, trusting trustedProxies: TrustedProxies, requestID: String,
        allowingUnderscores: Bool, droppedNames: inout Int, scheme: String = "http"
    ) -> HTTPHeaders {
        let tokens = connectionTokens(fields["connection"])
        let trusted = peer.map(trustedProxies.contains) ?? false
        var headers = HTTPHeaders()
        // Room for what is added after the copy, here and by the caller (X-Forwarded-Host, -For,
        // -Proto, X-Request-Id; Content-Length, Content-Type; traceparent, tracestate): no regrowth.
        headers.reserveCapacity(fields.count + 8)
        var forwardedFor: String?
        var keptHost = false
        var keptProto = false
        let plain = plainNameBytes
        for (fieldName, value) in fields {
            if !fieldName.utf8.allSatisfy({ plain[Int($0)] }) {
                let dashed = allowingUnderscores ? String(fieldName.lowercased().map { $0 == "_" ? "-" : $0 }) : ""
                guard allowingUnderscores, fieldName.utf8.allSatisfy({ plain[Int($0)] || $0 == UInt8(ascii: "_") }),
                    !shadowed.contains(dashed), !isHopClaim(dashed.utf8)
                else {
                    droppedNames += 1
                    continue
                }
            }
            let name = fieldName.utf8
            if Self.neverCopiedNames.contains(name) || tokens.contains(name)
                || (!trusted && Self.isHopClaim(name))
            {
                continue
            }
            // Only a trusted peer's `X-Forwarded-*` and `Forwarded` get here: from any other peer
            // they are hop claims, dropped above.
            if trusted {
                if equalFolded(name, Self.forwardedFor) {
                    forwardedFor = forwardedFor.map { $0 + ", " + value } ?? value
                    continue
                }
                if equalFolded(name, Self.forwarded) { continue }
                if equalFolded(name, Self.forwardedHost) { keptHost = true }
                if equalFolded(name, Self.forwardedProto) { keptProto = true }
            }
            headers.add(name: fieldName, value: value)
        }
        if let host = authority, !keptHost {
            headers.add(name: "X-Forwarded-Host", value: host)
        }
        if let clientAddress = peer?.ipAddress {
            headers.add(name: "X-Forwarded-For", value: forwardedFor.map { $0 + ", " + clientAddress } ?? clientAddress)
        }
        if !keptProto {
            headers.add(name: "X-Forwarded-Proto", value: scheme)
        }
        headers.add(name: "X-Request-Id", value: requestID)
        return headers
    }

    static let forwardedFor = Array("x-forwarded-for".utf8)
    static let forwardedHost = Array("x-forwarded-host".utf8)
    static let forwardedProto = Array("x-forwarded-proto".utf8)
    static let forwarded = Array("forwarded".utf8)

    /// The upstream's response headers for the client.
    static func clientResponse(_ headers: HTTPHeaders, requestID: String) -> HTTPHeaders {
        let tokens = connectionTokens(headers["connection"])
        var fields = HTTPHeaders()
        fields.reserveCapacity(headers.count + 1)
        for (name, value) in headers {
            if neverAnswered.contains(name.utf8) || tokens.contains(name.utf8) { continue }
            fields.add(name: name, value: value)
        }
        fields.add(name: "X-Request-Id", value: requestID)
        return fields
    }
}

/// The names a `Connection` header lists, which a proxy drops as hop-by-hop (RFC 9110 §7.6.1).
/// Nearly every `Connection` lists `keep-alive` or `close` only: those are kept as two flags, and a
/// header is looked up against them on its bytes, so the common message costs no set, no
/// lower-cased copy of its names and no allocation. Other names go to a set (a client's
/// `Connection` lists at most ``ProxyHeaders/maximumConnectionTokens``).
struct ConnectionTokens {
    private var close = false
    private var others: Set<String> = []

    init(_ values: [String]) {
        for value in values {
            HTTPFieldValue.forEachElement(of: value) { token in
                // `Keep-Alive` is hop-by-hop whatever `Connection` says: never passed on anyway.
                if HTTPFieldValue.equalsIgnoringCase(token, "close") {
                    close = true
                } else if !HTTPFieldValue.equalsIgnoringCase(token, "keep-alive") {
                    others.insert(ProxyHeaders.asciiLowercased(token.utf8))
                }
                return true
            }
        }
    }

    private static let closeName = Array("close".utf8)

    /// Whether `name` (a field name that passed llhttp) is listed, ASCII letters in any case.
    func contains(_ name: String.UTF8View) -> Bool {
        if close, ProxyHeaders.equalFolded(name, Self.closeName) { return true }
        return !others.isEmpty && others.contains(ProxyHeaders.asciiLowercased(name))
    }

    /// Whether `Connection` lists `name` (lower-case; not `keep-alive`, which is not kept).
    func contains(lowercased name: String) -> Bool {
        name == "close" ? close : others.contains(name)
    }
}

/// A set of lower-case header names, looked up on a name's bytes with ASCII letters folded
/// (`| 0x20`): no lower-cased copy, no hashing, a few comparisons of names of the same length.
/// The names looked up passed llhttp (token characters only), where no other byte folds onto a
/// lower-case letter or `-`.
struct FoldedNames {
    private let byLength: [[[UInt8]]]

    init(_ names: Set<String>) {
        var table = [[[UInt8]]](repeating: [], count: (names.map(\.utf8.count).max() ?? 0) + 1)
        for name in names { table[name.utf8.count].append(Array(name.utf8)) }
        byLength = table
    }

    func contains(_ name: String.UTF8View) -> Bool {
        let count = name.count
        guard count < byLength.count else { return false }
        return byLength[count].contains { ProxyHeaders.equalFolded(name, $0) }
    }
}

/// The head of the request the backend gets, for each kind of trip: the client's headers as
/// ``ProxyHeaders`` passes them on, and the target in its one canonical spelling
/// (``RequestTarget``) — the one the gateway routed on.
enum UpstreamRequestHead {
    /// A pass-through: the client's method and target, its body framed as the client framed it
    /// (by length, or chunked).
    static func passThrough(
        _ request: InFlightRequest, target: RequestTarget, peer: SocketAddress?, core: GatewayCore, observer: RequestObserver
    ) -> HTTPRequestHead {
        let head = request.head
        var headers = proxied(request, peer: peer, core: core, observer: observer)
        if let length = head.contentLength {
            headers.add(name: "Content-Length", value: String(length))
        } else if request.hasBody {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        return HTTPRequestHead(version: .http1_1, method: head.method, uri: target.forwarded, headers: headers)
    }

    /// A verified token exchange: `POST` to the exchange path with the gateway's own body.
    static func exchange(
        _ request: InFlightRequest, path: String, bodyLength: Int, peer: SocketAddress?, core: GatewayCore, observer: RequestObserver
    ) -> HTTPRequestHead {
        var headers = proxied(request, peer: peer, core: core, observer: observer)
        // The body is the gateway's own: plain form encoding, whatever parameters the client's
        // type carried (a charset the backend would decode with differently).
        headers.replaceOrAdd(name: "Content-Type", value: ExchangeAdmission.formType.description)
        headers.add(name: "Content-Length", value: String(bodyLength))
        return HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
    }

    /// The client's headers as the backend gets them (``ProxyHeaders``), with the trace's
    /// `traceparent` and `tracestate` (``TraceContext``), on every route; names
    /// with `_` (unless `allow-underscore-headers`) or another character than letters, digits and
    /// `-` dropped, and counted.
    private static func proxied(_ request: InFlightRequest, peer: SocketAddress?, core: GatewayCore, observer: RequestObserver) -> HTTPHeaders {
        var dropped = 0
        var headers = ProxyHeaders.upstreamRequest(
            request.head.headers, authority: request.authority, peer: peer, trusting: core.trustedProxies,
            requestID: request.requestID, allowingUnderscores: core.configuration.allowUnderscoreHeaders, droppedNames: &dropped,
            scheme: request.tls == nil ? "http" : "https")
        if dropped > 0 { observer.headerNamesDropped(dropped) }
        // The gateway's hop of the trace (the client's own headers were not copied).
        headers.add(name: "traceparent", value: request.trace.traceparent)
        if let state = request.trace.state { headers.add(name: "tracestate", value: state) }
        return headers
    }
}
