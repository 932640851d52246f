import NIOCore
import NIOHTTP1

/// The head of the request the backend gets, for each kind of trip: the client's headers as
/// ``ProxyHeaders`` passes them on, and the target in its one canonical spelling
/// (``RequestTarget``) — the one the gateway routed on.
enum UpstreamRequestHead {
    /// A pass-through: the client's method and target, its body framed as the client framed it
    /// (by length, or chunked).
    static func passThrough(_ request: InFlightRequest, target: RequestTarget, peer: SocketAddress?, core: GatewayCore) -> HTTPRequestHead {
        let head = request.head
        var headers = proxied(request, peer: peer, core: core)
        if let length = head.contentLength {
            headers.add(name: "Content-Length", value: String(length))
        } else if request.hasBody {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        return HTTPRequestHead(version: .http1_1, method: head.method, uri: target.forwarded, headers: headers)
    }

    /// A verified token exchange: `POST` to the exchange path with the gateway's own body.
    static func exchange(_ request: InFlightRequest, path: String, bodyLength: Int, peer: SocketAddress?, core: GatewayCore) -> HTTPRequestHead {
        var headers = proxied(request, peer: peer, core: core)
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
    private static func proxied(_ request: InFlightRequest, peer: SocketAddress?, core: GatewayCore) -> HTTPHeaders {
        var dropped = 0
        var headers = ProxyHeaders.upstreamRequest(
            request.head.headers, authority: request.authority, peer: peer, trusting: core.trustedProxies,
            requestID: request.requestID, allowingUnderscores: core.configuration.allowUnderscoreHeaders, droppedNames: &dropped)
        if dropped > 0 { core.metrics.headerNamesDropped(dropped) }
        // The gateway's hop of the trace (the client's own headers were not copied).
        headers.add(name: "traceparent", value: request.trace.traceparent)
        if let state = request.trace.state { headers.add(name: "tracestate", value: state) }
        return headers
    }
}
