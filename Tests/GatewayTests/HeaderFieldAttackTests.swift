import Foundation
import GatewayTestSupport
import Testing

/// Request heads an attacker who has read the gateway would send: `Host` values a backend
/// would read as something else, bytes the gateway could not forward as received, an
/// `Upgrade` that would stop the connection's parser, and header values sized to make a
/// reading loop costly. Each through a real connection, against a backend that records what
/// it gets.
@Suite("Header fields as a strict proxy reads them")
struct HeaderFieldAttackTests {
    static let invalidHosts = [
        "example.test/evil", "example.test evil", "a,b", "example.test:", "example.test:65536", "example.test:1x", "example.test:123456",
        "[::1", "[::1]x", "[zz::1]", "user@example.test", "example.test?x", "example.test#x", "%65xample.test", "",
        String(repeating: "a", count: 300),
    ]

    static let validHosts = [
        "example.test", "example.test:8080", "127.0.0.1", "127.0.0.1:65535", "[2001:db8::1]", "[2001:db8::1]:443", "a-b_c~d.example.",
    ]

    @Test("a Host that is not host[:port] is refused with 400 invalid_request and nothing is forwarded; a plain one is, as X-Forwarded-Host")
    func host() async throws {
        // One gateway for every value: starting one per value would only test start-up.
        try await EchoUpstream.withGateway { _, echo, port in
            for host in Self.invalidHosts {
                let raw = "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: \(host)\r\n\r\n"
                let answer = try await RawHTTP.send(port: port, raw: Array(raw.utf8))
                #expect(answer.status == 400 && answer.reason == "invalid_request", "\(host.debugDescription): \(answer.head) \(answer.body)")
                #expect(answer.body.contains("Host"))
            }
            #expect(echo.requests.isEmpty)
            for host in Self.validHosts {
                let raw = "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: \(host)\r\n\r\n"
                let answer = try await RawHTTP.send(port: port, raw: Array(raw.utf8))
                #expect(answer.status == 200, "\(host): \(answer.body)")
                #expect(echo.requests.last?.header("x-forwarded-host") == [host])
            }
            #expect(echo.requests.count == Self.validHosts.count)
        }
    }

    @Test("HTTP/1.1 without Host is refused (RFC 9112 §3.2), also in absolute form; HTTP/1.0 without Host is served")
    func missingHost() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for raw in [
                "GET /api/v2/REF/configuration HTTP/1.1\r\n\r\n",
                "GET http://example.test/api/v2/REF/configuration HTTP/1.1\r\n\r\n",
            ] {
                let answer = try await RawHTTP.send(port: port, raw: Array(raw.utf8))
                #expect(answer.status == 400 && answer.reason == "invalid_request", "\(raw.debugDescription): \(answer.body)")
                #expect(answer.body.contains("must carry Host"))
            }
            #expect(echo.requests.isEmpty)
            let old = try await RawHTTP.send(port: port, raw: Array("GET /api/v2/REF/configuration HTTP/1.0\r\n\r\n".utf8))
            #expect(old.status == 200, "\(old.body)")
            #expect(echo.requests.count == 1)
        }
    }

    @Test("a header value with bytes that are not UTF-8 is refused, never forwarded rewritten; UTF-8 passes byte for byte")
    func obsText() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for value: [UInt8] in [Array("caf".utf8) + [0xE9, 0x20, 0xFF], [0xC3], Array("x\u{FFFD}y".utf8)] {
                let raw = Array("GET /api/v2/REF/configuration HTTP/1.1\r\nHost: example.test\r\nX-A: ".utf8) + value + Array("\r\n\r\n".utf8)
                let answer = try await RawHTTP.send(port: port, raw: raw)
                #expect(answer.status == 400 && answer.reason == "invalid_request", "\(value): \(answer.body)")
                #expect(answer.body.contains("X-A") && answer.body.contains("not UTF-8"), "\(answer.body)")
            }
            #expect(echo.requests.isEmpty)
            let raw = "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: example.test\r\nX-A: café ✓\r\n\r\n"
            let answer = try await RawHTTP.send(port: port, raw: Array(raw.utf8))
            #expect(answer.status == 200, "\(answer.body)")
            #expect(echo.requests.last?.header("x-a") == ["café ✓"])
        }
    }

    @Test(
        "an Upgrade is not taken: not forwarded, answered with Connection: close at once, and the next request is served",
        arguments: [
            [
                ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ],
            [("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQAoAAAAAIAAAAA")],
            [("Upgrade", "h2c"), ("HTTP2-Settings", "AAMAAABkAAQAoAAAAAIAAAAA")],
        ])
    func upgrade(_ headers: [(String, String)]) async throws {
        // Timeouts far beyond the read timeout: a close seen within it is the upgrade's, not a clock's.
        try await EchoUpstream.withGateway(configure: {
            $0.headerTimeout = 300
            $0.idleTimeout = 300
        }) { _, echo, port in
            let connection = try RawConnection(port: port, readTimeout: 60)
            var request = "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: example.test\r\n"
            for (name, value) in headers { request += "\(name): \(value)\r\n" }
            // A second request pipelined behind it: the parser reads nothing after an upgrade
            // request, so it must not wait for an answer that cannot come.
            request += "\r\nGET /api/v2/REF/configuration?second HTTP/1.1\r\nHost: example.test\r\n\r\n"
            try await connection.write(request)
            let first = try #require(try await connection.readAnswer())
            #expect(first.status == 200, "\(first.body)")
            #expect(first.head.lowercased().contains("connection: close"), "\(first.head)")
            #expect(try await connection.closedByServer())
            let forwarded = try #require(echo.requests.first)
            #expect(forwarded.header("upgrade").isEmpty && forwarded.header("http2-settings").isEmpty)
            #expect(echo.requests.count == 1)
            // The client retries what went unanswered on a new connection.
            let retry = try await RawHTTP.send(port: port, method: "GET", target: "/api/v2/REF/configuration?second")
            #expect(retry.status == 200)
            #expect(echo.requests.count == 2)
        }
    }

    @Test("an Upgrade on a refused request closes the connection too")
    func upgradeRefused() async throws {
        try await EchoUpstream.withGateway { _, _, port in
            let connection = try RawConnection(port: port, readTimeout: 5)
            try await connection.write(
                "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: bad/host\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
                    + "GET /api/v2/REF/configuration HTTP/1.1\r\nHost: example.test\r\n\r\n")
            let first = try #require(try await connection.readAnswer())
            #expect(first.status == 400)
            #expect(try await connection.closedByServer())
        }
    }

    @Test("a Content-Length with blanks after it frames the body as the parser read it: forwarded whole, as the number")
    func contentLengthBlanks() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            for length in ["5 ", " 5  ", "5\t"] {
                let raw = "POST /api/v2/REF/anything HTTP/1.1\r\nHost: example.test\r\nContent-Length: \(length)\r\n\r\nhello"
                let connection = try RawConnection(port: port, readTimeout: 5)
                try await connection.write(raw)
                // Answered at once, never left waiting for a body the gateway would not forward.
                let answer = try #require(try await connection.readAnswer(), "\(length.debugDescription)")
                if length.contains("\t") {
                    // The parser refuses a tab there: refused, nothing forwarded.
                    #expect(answer.status == 200 || answer.status == 400, "\(length.debugDescription): \(answer.body)")
                    if answer.status == 400 { continue }
                }
                #expect(answer.status == 200, "\(length.debugDescription): \(answer.body)")
                #expect(echo.requests.last?.body == "hello" && echo.requests.last?.header("content-length") == ["5"])
            }
            #expect(echo.requests.count >= 2)
        }
    }

    @Test("Connection lists at most 32 names: more is 400 invalid_request, 32 pass and are stripped")
    func connectionTokens() async throws {
        try await EchoUpstream.withGateway { _, echo, port in
            let names = (1...32).map { "X-Hop-\($0)" }
            let kept = try await RawHTTP.send(
                port: port, method: "GET", target: "/api/v2/REF/configuration",
                headers: [("Connection", names.joined(separator: ", ")), ("X-Hop-7", "1"), ("X-End", "2")])
            #expect(kept.status == 200, "\(kept.body)")
            #expect(echo.requests.last?.header("x-hop-7").isEmpty == true && echo.requests.last?.header("x-end") == ["2"])
            for value in [(names + ["X-Hop-33"]).joined(separator: ","), String(repeating: "a,", count: 10_000)] {
                let refused = try await RawHTTP.send(
                    port: port, method: "GET", target: "/api/v2/REF/configuration", headers: [("Connection", value)])
                #expect(refused.status == 400 && refused.reason == "invalid_request", "\(refused.body)")
                #expect(refused.body.contains("more than 32"))
            }
            // Empty list elements are not names.
            let empty = try await RawHTTP.send(
                port: port, method: "GET", target: "/api/v2/REF/configuration", headers: [("Connection", String(repeating: " ,", count: 5_000))])
            #expect(empty.status == 200, "\(empty.body)")
            #expect(echo.requests.count == 2)
        }
    }

    @Test("a partner status longer than its bound is unreadable, refused on the exchange and counted on the routes that forward it")
    func partnerStatusBound() async throws {
        try await withHarness { h in
            let saml = GatewayHarness.base64(GatewayHarness.issue())
            let long = String(repeating: "-", count: 40_000)
            let refused = try await h.exchangeV2(saml, status: long)
            #expect(refused.status == 400 && refused.reason == "invalid_parameter_value", "\(refused.body)")
            #expect((refused.json?["message"] as? String)?.contains("longer than 4096 bytes") == true, "\(refused.body)")
            // The same status in the URL-safe alphabet, without padding, and between blanks.
            let status = GatewayHarness.partnerStatus()
            let urlSafe = status.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let accepted = try await h.exchangeV2(saml, status: " \t" + urlSafe + " ")
            #expect(accepted.status == 201, "\(accepted.body)")
            // Forwarded (the backend decides on these routes) and counted.
            _ = try await h.send(.GET, "/api/v2/REF/profiles", headers: [("AP-Partner-Framework-Status", long)])
            let metrics = try await h.send(.GET, "/metrics").body
            #expect(
                metrics.contains(#"samlgate_partner_status_total{route="v2_profiles",verdict="unreadable"} 1"#)
                    || metrics.contains(#"samlgate_partner_status_total{verdict="unreadable",route="v2_profiles"} 1"#), "\(metrics)")
        }
    }
}
