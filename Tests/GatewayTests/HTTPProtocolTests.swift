import Foundation
import Gateway
import GatewayTestSupport
import Testing

/// HTTP/1.1 as the gateway speaks it on a raw socket, whatever serves it: smuggling defences,
/// pipelining, `Expect: 100-continue`, half-close, header limits, HTTP/1.0 clients.
@Suite("HTTP/1.1 protocol")
struct HTTPProtocolTests {
    /// The same request head framed two ways: `Content-Length` says the body is the chunked
    /// terminator, `Transfer-Encoding` says a second request follows it.
    static let smuggled =
        "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"

    @Test(
        "Content-Length and Transfer-Encoding together: 400, the connection closed, nothing forwarded",
        arguments: [
            smuggled,
            "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nhelloGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 40\r\n\r\nhelloGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\nhello",
            "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        ])
    func conflictingFraming(_ request: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write(request)
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 400)
            #expect(try await connection.closedByServer())
            #expect(echo.requests.isEmpty, "forwarded: \(echo.requests.map(\.target))")
        }
    }

    @Test(
        "a malformed chunk size: 400 and close; the upstream never gets a complete request",
        arguments: [
            "zz\r\nhello\r\n0\r\n\r\n", "5 ; x\r\nhello\r\n0\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n",
            "ffffffffffffffffff\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n",
        ])
    func badChunkSize(_ body: String) async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
            let answer = try await connection.readAnswer()
            #expect(answer == nil || answer?.status == 400)
            #expect(try await connection.closedByServer())
            #expect(echo.requests.isEmpty, "forwarded: \(echo.requests.map(\.body))")
        }
    }

    @Test("pipelined requests are answered in order, local and proxied alike")
    func pipelined() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write(
                "GET /first HTTP/1.1\r\nHost: h\r\nX-Request-Id: one\r\n\r\n"
                    + "GET /healthz HTTP/1.1\r\nHost: h\r\nX-Request-Id: two\r\n\r\n"
                    + "POST /third HTTP/1.1\r\nHost: h\r\nX-Request-Id: three\r\nContent-Length: 5\r\n\r\nhello"
                    + "GET /fourth HTTP/1.1\r\nHost: h\r\nX-Request-Id: four\r\n\r\n")
            var ids: [String] = []
            for _ in 0..<4 {
                let answer = try #require(try await connection.readAnswer())
                #expect(answer.status == 200)
                ids.append(Self.header("x-request-id", in: answer) ?? "?")
            }
            #expect(ids == ["one", "two", "three", "four"])
            #expect(echo.requests.map(\.target) == ["/first", "/third", "/fourth"])
            #expect(echo.requests[1].body == "hello")
        }
    }

    @Test("five hundred pipelined requests in one write, local and proxied: all answered, in order")
    func manyPipelined() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            // ~60 KB: several reads, each stopped while queued requests wait for their turn.
            let count = 500
            try await connection.write(
                (0..<count).map { index in
                    let target = index % 3 == 0 ? "/healthz" : "/p\(index)"
                    return "GET \(target) HTTP/1.1\r\nHost: h\r\nX-Request-Id: r\(index)\r\nX-Pad: \(String(repeating: "x", count: 40))\r\n\r\n"
                }.joined())
            var ids: [String] = []
            var failure: String?
            for _ in 0..<count {
                guard let answer = try await connection.readAnswer() else {
                    failure = "no answer after \(ids.count)"
                    break
                }
                guard answer.status == 200 else {
                    failure = "answer \(ids.count): \(answer.status) \(answer.reason ?? "")"
                    break
                }
                ids.append(Self.header("x-request-id", in: answer) ?? "?")
            }
            #expect(failure == nil)
            // Compared by first difference: a failing `==` on arrays this long is diffed for minutes.
            let expected = (0..<count).map { "r\($0)" }
            #expect(ids.count == count)
            #expect(zip(ids, expected).first { $0 != $1 } == nil)
            let targets = echo.requests.map(\.target)
            let forwarded = (0..<count).filter { $0 % 3 != 0 }.map { "/p\($0)" }
            #expect(targets.count == forwarded.count)
            #expect(zip(targets, forwarded).first { $0 != $1 } == nil)
        }
    }

    @Test("pipelined requests, then a half-close: every one is answered before the connection closes")
    func pipelinedThenHalfClose() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write(
                "POST /one HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                    + "GET /two HTTP/1.1\r\nHost: h\r\n\r\n"
                    + "GET /three HTTP/1.1\r\nHost: h\r\n\r\n")
            connection.shutdownWrite()
            for _ in 0..<3 {
                let answer = try #require(try await connection.readAnswer())
                #expect(answer.status == 200)
            }
            #expect(try await connection.closedByServer())
            #expect(echo.requests.map(\.target) == ["/one", "/two", "/three"])
        }
    }

    @Test("a malformed request pipelined behind a good one: the good one is answered, then 400 and close")
    func malformedBehindGood() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write("GET /good HTTP/1.1\r\nHost: h\r\n\r\n" + Self.smuggled)
            let first = try #require(try await connection.readAnswer())
            #expect(first.status == 200)
            let second = try #require(try await connection.readAnswer())
            #expect(second.status == 400)
            #expect(try await connection.closedByServer())
            #expect(echo.requests.map(\.target) == ["/good"])
        }
    }

    @Test("Expect: 100-continue gets 100 Continue before the body, then the answer; the expectation is not forwarded")
    func expectContinue() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port, readTimeout: 10)
            try await connection.write("POST /upload HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try #require(try await connection.readAnswer())
            #expect(interim.status == 100)
            try await connection.write("hello")
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 200)
            #expect(echo.requests.first?.body == "hello")
            #expect(echo.requests.first?.header("expect") == [])
        }
    }

    @Test("Expect: 100-continue on a body the gateway refuses by its head: the final answer, no 100")
    func expectContinueRefused() async throws {
        try await EchoUpstream.withGateway(configure: { $0.bodyLimit = 1024 }) { _, echo, port in
            let connection = try RawConnection(port: port, readTimeout: 10)
            try await connection.write(
                "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\n")
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 413)
            #expect(answer.reason == "body_too_large")
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("a client that half-closes after its request still gets the answer, then the connection closes")
    func halfClose() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write("POST /half HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
            connection.shutdownWrite()
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 200)
            #expect(echo.requests.first?.body == "hello")
            #expect(try await connection.closedByServer())
        }
    }

    @Test("an HTTP/1.0 client gets an HTTP/1.x answer with a framed body, then the connection closes")
    func http10() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            try await connection.write("GET /old HTTP/1.0\r\nHost: h\r\n\r\n")
            let answer = try #require(try await connection.readAnswer())
            #expect(answer.status == 200)
            #expect(answer.head.hasPrefix("HTTP/1."))
            #expect(answer.body == "{\"echo\":true}")
            #expect(try await connection.closedByServer())
            #expect(echo.requests.map(\.target) == ["/old"])
        }
    }

    @Test("a request head past the header limit: 431, the connection closed, nothing forwarded")
    func headerTooLarge() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let connection = try RawConnection(port: port)
            let filler = String(repeating: "a", count: 8_000)
            var request = "GET /big HTTP/1.1\r\nHost: h\r\n"
            for index in 0..<16 { request += "X-Filler-\(index): \(filler)\r\n" }
            try await connection.write(request + "\r\n")
            let answer = try await connection.readAnswer()
            #expect(answer?.status == 431)
            #expect(try await connection.closedByServer())
            #expect(echo.requests.isEmpty)
        }
    }

    @Test("an absolute-form target is forwarded in origin-form; its authority is the forwarded host")
    func absoluteForm() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let answer = try await RawHTTP.send(port: port, method: "GET", target: "http://app.example.test/abs?x=1")
            #expect(answer.status == 200)
            #expect(echo.requests.map(\.target) == ["/abs?x=1"])
            #expect(echo.requests.first?.header("x-forwarded-host") == ["app.example.test"])
            let userinfo = try await RawHTTP.send(port: port, method: "GET", target: "http://user@app.example.test/abs")
            #expect(userinfo.status == 400 && userinfo.reason == "invalid_request_target")
            #expect(echo.requests.count == 1)
        }
    }

    @Test("two Host headers: 400 duplicate_header, nothing forwarded")
    func duplicateHost() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let answer = try await RawHTTP.send(port: port, method: "GET", target: "/x", headers: [("Host", "other.example.test")])
            #expect(answer.status == 400 && answer.reason == "duplicate_header", "\(answer.head)")
            #expect(echo.requests.isEmpty)
        }
    }

    static func header(_ name: String, in answer: RawHTTP.Answer) -> String? {
        for line in answer.head.split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}
