import NIOCore

/// A whole answer of the gateway's own (a local endpoint's, or a refusal): what the connection
/// writes, with `Content-Length`, `X-Request-Id` and, when it closes, `Connection: close` added.
struct GatewayResponse {
    var status: Int
    var contentType: String
    var body: ByteBuffer
    /// Further headers, in order (`Allow`, `Retry-After`).
    var headers: [(String, String)] = []

    static func json(status: Int, _ json: String) -> GatewayResponse {
        GatewayResponse(status: status, contentType: "application/json", body: ByteBuffer(string: json))
    }
}
