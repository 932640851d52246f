import Foundation
import GatewayTestSupport
import NIOHPACK
import NIOHTTP1
import Testing

@testable import Gateway

/// What an HTTP/2 request becomes upstream (``HTTP2Stream``), checked at an echo
/// backend that logs what it received: at least as strict as nginx in front of the same backend —
/// a request the backend would read otherwise than the gateway did is refused on its stream and
/// never forwarded, a malformed stream never leaves a complete request behind — and the valid
/// requests nginx serves are served.
@Suite("HTTP/2: requests translated as strictly as nginx")
struct HTTP2TranslationTests {
    typealias Raw = RawHTTP2Connection

    static let path = "/api/v1/config/REF"

    /// The frames of `stream` up to its end, and the text of its DATA.
    static func answer(_ stream: UInt32, on connection: Raw) async throws -> (frames: [Raw.Frame], body: String, closed: Bool) {
        let (frames, closed) = try await connection.frames {
            $0.stream == stream && ($0.endStream || $0.type == Raw.FrameType.rstStream.rawValue)
        }
        let data = frames.filter { $0.stream == stream && $0.type == Raw.FrameType.data.rawValue }.flatMap(\.payload)
        return (frames, String(decoding: data, as: UTF8.self), closed)
    }

    /// A header block with the given pseudo-headers (in this order) and fields.
    static func block(_ fields: [(String, String)]) -> [UInt8] {
        fields.flatMap { Raw.literal($0.0, $0.1) }
    }

    static let pseudo: [(String, String)] = [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1")]

    @Test(
        "a head nginx refuses is answered 400 invalid_request on its stream, never forwarded; the stream beside it is served",
        arguments: [
            ("method not a token", [(":method", "PO{ST}")]), ("method with @", [(":method", "GET@/api/v1/config/REF")]),
            ("empty method", [(":method", "")]), ("method with a no-break space", [(":method", "GET\u{A0}")]),
            ("empty scheme", [(":scheme", "")]), ("scheme not http", [(":scheme", "ftp")]),
            ("absolute path naming another host", [(":path", "http://evil.example/api/v1/config/REF")]),
            ("authority and a different host", [("host", "evil.example")]), ("userinfo in the authority", [(":authority", "u@127.0.0.1")]),
            ("content-length with a sign", [("content-length", "+0")]), ("content-length with a blank", [("content-length", "0 ")]),
            ("content-length of two values", [("content-length", "0, 1")]), ("content-length not a number", [("content-length", "zero")]),
            ("two hosts without authority", [(":authority", ""), ("host", "127.0.0.1"), ("host", "127.0.0.1")]),
        ])
    func refusedHead(_ name: String, _ changes: [(String, String)]) async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { h, echo, port in
            var fields = Self.pseudo
            for (field, value) in changes {
                if let index = fields.firstIndex(where: { $0.0 == field }), field.hasPrefix(":") {
                    fields[index].1 = value
                } else {
                    fields.append((field, value))
                }
            }
            let connection = try Raw(port: port, readTimeout: 30)
            try await connection.send(Raw.frame(.headers, flags: Raw.endHeaders | Raw.endStream, stream: 1, Self.block(fields)))
            // Answered with samlgate's reason, or reset by swift-nio-http2 (what it refuses itself).
            let (frames, body, closed) = try await Self.answer(1, on: connection)
            let reset = frames.last?.type == Raw.FrameType.rstStream.rawValue && frames.last?.resetCode == Raw.protocolError
            #expect(!closed && (reset || body.contains("\"details\":\"invalid_request;")), "\(name): \(frames.map(\.type)) \(body)")
            try await connection.send(Raw.get(3, path: Self.path))
            let (next, _, _) = try await Self.answer(3, on: connection)
            #expect(next.contains { $0.stream == 3 && $0.indexedStatus == 200 }, "\(name)")
            #expect(echo.requests.count == 1, "\(name): forwarded \(echo.requests.map(\.method))")
        }
    }

    @Test("content-length as a list of one number is forwarded as that number with its body; cookie crumbs joined with '; '")
    func lengthListAndCookies() async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { h, echo, port in
            let connection = try Raw(port: port, readTimeout: 30)
            let fields =
                [(":method", "POST"), (":scheme", "http"), (":path", Self.path), (":authority", "127.0.0.1")] + [
                    ("content-type", "text/plain"), ("content-length", "5, 5"), ("cookie", "a=1"), ("x-between", "y"), ("cookie", "b=2"),
                ]
            try await connection.send(
                Raw.frame(.headers, flags: Raw.endHeaders, stream: 1, Self.block(fields))
                    + Raw.frame(.data, flags: Raw.endStream, stream: 1, Array("hello".utf8)))
            let (frames, _, _) = try await Self.answer(1, on: connection)
            #expect(frames.contains { $0.stream == 1 && $0.indexedStatus == 200 })
            let received = try #require(echo.requests.first)
            #expect(received.header("content-length") == ["5"] && received.body == "hello")
            #expect(received.header("cookie") == ["a=1; b=2"], "\(received.header("cookie"))")
        }
    }

    @Test("host without :authority is the authority: served, forwarded with that Host")
    func hostWithoutAuthority() async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { h, echo, port in
            let connection = try Raw(port: port, readTimeout: 30)
            let fields = [(":method", "GET"), (":scheme", "http"), (":path", Self.path), ("host", "api.example")]
            try await connection.send(Raw.frame(.headers, flags: Raw.endHeaders | Raw.endStream, stream: 1, Self.block(fields)))
            let (frames, _, _) = try await Self.answer(1, on: connection)
            #expect(frames.contains { $0.stream == 1 && $0.indexedStatus == 200 })
            #expect(echo.requests.first?.header("x-forwarded-host") == ["api.example"])
        }
    }

    @Test("DATA past content-length resets the stream (PROTOCOL_ERROR) with the request one frame short: the backend never has it whole")
    func dataPastLength() async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { h, echo, port in
            let connection = try Raw(port: port, readTimeout: 30)
            let fields =
                [(":method", "POST"), (":scheme", "http"), (":path", Self.path), (":authority", "127.0.0.1")] + [
                    ("content-type", "text/plain"), ("content-length", "5"),
                ]
            try await connection.send(
                Raw.frame(.headers, flags: Raw.endHeaders, stream: 1, Self.block(fields)) + Raw.frame(.data, flags: 0, stream: 1, Array("hello".utf8))
            )
            try await connection.roundTrip()
            try await connection.send(Raw.frame(.data, flags: Raw.endStream, stream: 1, Array("!".utf8)))
            let (frames, _, closed) = try await Self.answer(1, on: connection)
            #expect(!closed && frames.last?.resetCode == Raw.protocolError, "\(frames.map(\.type))")
            try await connection.send(Raw.get(3, path: Self.path))
            _ = try await Self.answer(3, on: connection)
            #expect(echo.requests.map(\.method) == ["GET"], "the backend received \(echo.requests.map { ($0.method, $0.body) })")
        }
    }

    @Test(
        "valid requests nginx serves are served: two empty DATA frames in a row, 900 small fields (past the 32 KiB list size it had), a block over 32 CONTINUATION frames",
        arguments: ["empty DATA", "many fields", "continuations"])
    func validServed(_ kind: String) async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { h, echo, port in
            let connection = try Raw(port: port, readTimeout: 30)
            try await connection.send(Raw.settingsAck)
            switch kind {
            case "empty DATA":
                let fields = Self.pseudo.map { $0.0 == ":method" ? ($0.0, "POST") : $0 } + [("content-type", "text/plain")]
                try await connection.send(
                    Raw.frame(.headers, flags: Raw.endHeaders, stream: 1, Self.block(fields)) + Raw.frame(.data, flags: 0, stream: 1, [])
                        + Raw.frame(.data, flags: 0, stream: 1, []) + Raw.frame(.data, flags: Raw.endStream, stream: 1, Array("x".utf8)))
            case "many fields":
                let fields = Self.pseudo + (0..<900).map { ("x-f\($0)", "v") }
                try await connection.send(Raw.headerFrames(1, Self.block(fields), endStream: true))
            default:
                try await connection.send(Raw.headerFrames(1, Self.block(Self.pseudo), endStream: true, pieceSize: 4))
            }
            let (frames, body, closed) = try await Self.answer(1, on: connection)
            #expect(!closed && frames.contains { $0.stream == 1 && $0.indexedStatus == 200 }, "\(kind): \(frames.map(\.type)) \(body)")
            #expect(echo.requests.count == 1)
        }
    }

    @Test("a header list over HTTP/1.1's limit is answered 431 on its stream; the exchange open beside it is answered")
    func oversizedHeaderList() async throws {
        try await withHarness(configure: { $0.h2c = true }) { (h: GatewayHarness) async throws in
            let connection = try Raw(port: HTTP2AttackTests.port(h), readTimeout: 30)
            try await connection.send(Raw.settingsAck + Raw.openExchanges(1))
            try await connection.roundTrip()
            let fields = Self.pseudo + (0..<12).map { ("x-large-\($0)", String(repeating: "v", count: 8_000)) }
            try await connection.send(Raw.headerFrames(3, Self.block(fields), endStream: true))
            let (_, body, closed) = try await Self.answer(3, on: connection)
            #expect(!closed && body.contains("\"details\":\"invalid_request; limit=81920\""), "\(body)")
            #expect(try await h.metric("samlgate_requests_total{route=\"invalid_request\",status=\"431\"}") == 1)
            let (answered, closedAfter) = try await HTTP2StreamErrorTests.finish(1, on: connection)
            #expect(answered && !closedAfter)
        }
    }

    @Test(
        "an answer's head as HTTP/2 fields: :status first, names lower-cased, connection-specific ones left out, x-request-id never indexed"
    )
    func answerFields() {
        let head = HTTPResponseHead(
            version: .http1_1, status: .created,
            headers: HTTPHeaders([
                ("Content-Type", "application/json"), ("Connection", "close"), ("Keep-Alive", "timeout=5"), ("Transfer-Encoding", "chunked"),
                ("Upgrade", "h2c"), ("X-Request-Id", "abc"), ("set-cookie", "a=1"),
            ]))
        let fields = HTTP2Stream.fields(of: head)
        #expect(fields.map { $0.name } == [":status", "content-type", "x-request-id", "set-cookie"])
        #expect(fields.first(name: ":status") == "201")
        let indexing: [HPACKIndexing] = fields.map { $0.indexable }
        #expect(indexing == [.indexable, .indexable, .nonIndexable, .indexable])
    }

    @Test("an answer's end rides on its last DATA frame: a whole answer is one HEADERS and one DATA with END_STREAM")
    func endOnLastData() async throws {
        try await EchoUpstream.withGateway(configure: { $0.h2c = true }) { _, _, port in
            let connection = try Raw(port: port, readTimeout: 30)
            try await connection.send(Raw.get(1, path: Self.path))
            let (frames, body, closed) = try await Self.answer(1, on: connection)
            let stream = frames.filter { $0.stream == 1 }
            #expect(!closed && stream.map(\.type) == [Raw.FrameType.headers.rawValue, Raw.FrameType.data.rawValue], "\(stream.map(\.type))")
            #expect(stream.last?.endStream == true && body == "{\"echo\":true}")
        }
    }
}
