import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Gateway

/// The upstream request encoder on an `EmbeddedChannel`: the bytes a backend reads for a head with
/// and without an endpoint, a body framed by length or in chunks, and the end.
@Suite("Upstream request encoder")
struct UpstreamRequestEncoderTests {
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var out = ""
        while let part = try channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: part) }
        return out
    }

    @Test("a head to an endpoint: the path prefix before the target, Host first, the fields as given, in order")
    func headWithEndpoint() throws {
        let encoder = UpstreamRequestEncoder()
        let channel = EmbeddedChannel(handler: encoder)
        encoder.endpoint(prefix: "/base", authority: "backend.test:8080")
        let head = HTTPRequestHead(
            version: .http1_1, method: .POST, uri: "/api/v1/tokens/authn?x=1",
            headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", "3"), ("X-A", "caf\u{E9}")]))
        try channel.writeOutbound(HTTPClientRequestPart.head(head))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: "a=b"))))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        #expect(
            try Self.written(channel)
                == "POST /base/api/v1/tokens/authn?x=1 HTTP/1.1\r\nHost: backend.test:8080\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\nX-A: caf\u{E9}\r\n\r\na=b")
        // The endpoint is for one head: the next one (a health probe's) carries its own Host.
        try channel.writeOutbound(
            HTTPClientRequestPart.head(
                HTTPRequestHead(
                    version: .http1_1, method: .GET, uri: "/health",
                    headers: HTTPHeaders([("Host", "probe.test")]))))
        #expect(try Self.written(channel) == "GET /health HTTP/1.1\r\nHost: probe.test\r\n\r\n")
    }

    @Test("Transfer-Encoding: chunked frames each body part as a chunk (an empty part writes nothing) and the end as the last chunk")
    func chunked() throws {
        let encoder = UpstreamRequestEncoder()
        let channel = EmbeddedChannel(handler: encoder)
        let head = HTTPRequestHead(version: .http1_1, method: .PUT, uri: "/x", headers: HTTPHeaders([("transfer-encoding", "Chunked")]))
        try channel.writeOutbound(HTTPClientRequestPart.head(head))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: String(repeating: "z", count: 26)))))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer())))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: "ok"))))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        #expect(
            try Self.written(channel)
                == "PUT /x HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n1a\r\n\(String(repeating: "z", count: 26))\r\n2\r\nok\r\n0\r\n\r\n")
        // The next request, framed by length, is not chunked.
        try channel.writeOutbound(
            HTTPClientRequestPart.head(
                HTTPRequestHead(
                    version: .http1_1, method: .POST, uri: "/y",
                    headers: HTTPHeaders([("Content-Length", "2")]))))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: "hi"))))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        #expect(try Self.written(channel) == "POST /y HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi")
    }
}
