import Foundation
import GatewayTestSupport
import NIOCore
import NIOEmbedded
import Testing

@testable import Gateway

/// Whole requests on one `EmbeddedEventLoop` (``EmbeddedGateway``): the client's bytes in, a
/// scripted backend on the same loop, exchanges verified in line, every clock virtual. What the
/// socket suites show end to end with real processes, pinned here to the instant, without a sleep.
@Suite("Request lifecycle on virtual time")
struct RequestLifecycleEmbeddedTests {
    static let get = "GET /api/v1/config/REF HTTP/1.1\r\nHost: gateway.test\r\n\r\n"
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    /// A gateway with a read timeout of 1 s and a total timeout of 10 s (idle 60 s).
    static func gateway(upstreams: Int = 1, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) throws -> EmbeddedGateway {
        try EmbeddedGateway(upstreamCount: upstreams) {
            $0.readTimeout = 1
            $0.totalTimeout = 10
            $0.idleTimeout = 60
            configure(&$0)
        }
    }

    @Test("a pass-through: the backend gets the request, the client its answer; the connection is pooled and carries the next request")
    func passThroughAndReuse() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        let sent = try gateway.upstreams.received()
        #expect(sent.hasPrefix("GET /api/v1/config/REF HTTP/1.1\r\n") && sent.contains("Host: 127.0.0.1:9000\r\n"), "\(sent)")
        try gateway.upstreams.answer(Self.ok)
        let answer = try gateway.written()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix("\r\n\r\nok"), "\(answer)")

        try gateway.send(Self.get)
        #expect(gateway.upstreams.opened.count == 1, "the pooled connection is reused")
        #expect(try gateway.upstreams.received().hasPrefix("GET /api/v1/config/REF "))
        try gateway.upstreams.answer(Self.ok)
        #expect(try gateway.statuses() == ["HTTP/1.1 200 OK"])
    }

    @Test("a silent backend: 504 upstream_timeout exactly one read timeout after the request, not before")
    func readTimeout() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        gateway.advance(0.999)
        #expect(try gateway.written().isEmpty)
        gateway.advance(0.001)
        let answer = try gateway.written()
        #expect(answer.hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n") && answer.contains("upstream_timeout"), "\(answer)")
        #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:9000\",kind=\"timeout\"}") == 1)
        #expect(gateway.channel.isActive, "the client's connection is kept")
    }

    @Test(
        "a silent backend on a keep-alive connection's second request: 504 one read timeout after that request (the timer armed for the first moves)")
    func readTimeoutOnSecondRequest() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        try gateway.upstreams.answer(Self.ok)
        #expect(try gateway.statuses() == ["HTTP/1.1 200 OK"])
        gateway.advance(0.5)
        try gateway.send(Self.get)
        gateway.advance(0.999)
        #expect(try gateway.written().isEmpty)
        gateway.advance(0.001)
        #expect(try gateway.statuses() == ["HTTP/1.1 504 Gateway Timeout"])
    }

    @Test("an upload that outlasts the read timeout, then a silent backend: 504 one read timeout after the upload's end, not at the total timeout")
    func readTimeoutAfterSlowUpload() throws {
        let gateway = try Self.gateway()
        try gateway.send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab")
        gateway.advance(1.5)
        #expect(try gateway.written().isEmpty, "the upload is the client's time, not the backend's silence")
        try gateway.send("cd")
        #expect(try gateway.upstreams.received().hasSuffix("\r\n\r\nabcd"))
        gateway.advance(0.999)
        #expect(try gateway.written().isEmpty)
        gateway.advance(0.001)
        #expect(try gateway.statuses() == ["HTTP/1.1 504 Gateway Timeout"])
    }

    @Test(
        "a client dribbling its body past total-timeout: 408 client_timeout, counted as the client's, never against the backend (an interim answer from the backend changes nothing)",
        arguments: [false, true])
    func slowUpload(interim: Bool) throws {
        let gateway = try Self.gateway()
        try gateway.send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
        // Its read clock would start before the body is complete if the trip saw it.
        if interim { try gateway.upstreams.answer("HTTP/1.1 100 Continue\r\n\r\n") }
        // A byte every 0.1 s, well within idle-timeout, until the gateway answers (never all 1000).
        var answer = ""
        var sent = 0
        while answer.isEmpty && sent < 200 {
            try gateway.send("x")
            sent += 1
            gateway.advance(0.1)
            answer = try gateway.written()
        }
        #expect(sent == 100, "answered at the total timeout, 10 s after the trip began")
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") && answer.contains("client_timeout"), "\(answer)")
        #expect(gateway.metric("samlgate_errors_total{code=\"client_timeout\"}") == 1)
        #expect(gateway.metric("samlgate_errors_total{code=\"upstream_timeout\"}") == 0)
        #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:9000\",kind=\"timeout\"}") == 0)
        #expect(gateway.core.upstream.healthyCount == 1)
    }

    @Test("a client that does not take a large answer past total-timeout: its connection closed, counted as client_timeout, not against the backend")
    func slowReader() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        gateway.channel.isWritable = false
        try gateway.upstreams.answer("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "b", count: 30_000))
        // Held back far past the read timeout: the wait is the client's.
        gateway.advance(9.999)
        #expect(gateway.channel.isActive)
        gateway.advance(0.001)
        #expect(!gateway.channel.isActive)
        #expect(gateway.metric("samlgate_errors_total{code=\"client_timeout\"}") == 1)
        #expect(gateway.metric("samlgate_errors_total{code=\"upstream_timeout\"}") == 0)
        #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:9000\",kind=\"timeout\"}") == 0)
        #expect(gateway.core.upstream.healthyCount == 1)
    }

    @Test("a backend that never accepts: 504 upstream_timeout at the total timeout, counted against it")
    func connectNeverCompletes() throws {
        let gateway = try Self.gateway()
        gateway.upstreams.unanswered = true
        try gateway.send(Self.get)
        gateway.advance(9.999)
        #expect(try gateway.written().isEmpty, "connecting is not the backend's read silence")
        gateway.advance(0.001)
        #expect(try gateway.statuses() == ["HTTP/1.1 504 Gateway Timeout"])
        #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:9000\",kind=\"timeout\"}") == 1)
    }

    @Test("two backends, the first refusing: the request goes to the second; both refusing: 502 upstream_unavailable, each counted once")
    func connectRetry() throws {
        let gateway = try Self.gateway(upstreams: 2)
        gateway.upstreams.refusing = [0, 1]
        try gateway.send(Self.get)
        #expect(try gateway.statuses() == ["HTTP/1.1 502 Bad Gateway"])
        for port in [9000, 9001] {
            #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:\(port)\",kind=\"connect\"}") == 1)
        }

        let second = try Self.gateway(upstreams: 2)
        second.upstreams.refusing = [0]
        for _ in 0..<2 {
            try second.send(Self.get)
            try second.upstreams.answer(Self.ok)
            #expect(try second.statuses() == ["HTTP/1.1 200 OK"])
        }
        #expect(second.upstreams.opened.allSatisfy { $0.endpoint == 1 })
    }

    @Test("a pooled connection the backend closed while idle is not used: the next request gets a new one")
    func closedWhileIdle() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        try gateway.upstreams.answer(Self.ok)
        _ = try gateway.written()
        try gateway.upstreams.last?.close().wait()
        try gateway.send(Self.get)
        #expect(gateway.upstreams.opened.count == 2)
        try gateway.upstreams.answer(Self.ok)
        #expect(try gateway.statuses() == ["HTTP/1.1 200 OK"])
    }

    @Test("a backend that closes mid-answer: the client's connection is closed (part of the answer is out), the backend counted")
    func brokenMidAnswer() throws {
        let gateway = try Self.gateway()
        try gateway.send(Self.get)
        try gateway.upstreams.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
        try gateway.upstreams.last?.close().wait()
        gateway.loop.run()
        #expect(try gateway.written().hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(!gateway.channel.isActive)
        #expect(gateway.metric("samlgate_upstream_errors_total{upstream=\"http://127.0.0.1:9000\",kind=\"broken\"}") == 1)
    }

    @Test("an idle client is closed at idle-timeout; a head trickled in past header-timeout gets 408 header_timeout, though bytes keep coming")
    func clientClocks() throws {
        let idle = try Self.gateway { $0.idleTimeout = 5 }
        idle.advance(4.999)
        #expect(idle.channel.isActive)
        idle.advance(0.001)
        #expect(!idle.channel.isActive)

        let trickle = try Self.gateway {
            $0.idleTimeout = 5
            $0.headerTimeout = 2
        }
        // A header line every 0.1 s: never idle, never a complete head. Stops at the answer.
        try trickle.send("GET /slow HTTP/1.1\r\nHost: h\r\n")
        var lines = 0
        while trickle.channel.isActive && lines < 60 {
            trickle.advance(0.1)
            if trickle.channel.isActive { try trickle.send("X-Slow-\(lines): a\r\n") }
            lines += 1
        }
        #expect(lines == 20, "answered at header-timeout after the head's first bytes")
        let answer = try trickle.written()
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") && answer.contains("header_timeout"), "\(answer)")
        #expect(!trickle.channel.isActive)
        #expect(trickle.upstreams.opened.isEmpty, "nothing forwarded")
    }

    @Test("an exchange whose body stalls: 400 malformed_request and the close exactly at idle-timeout after the last bytes; nothing forwarded")
    func stalledBody() throws {
        let gateway = try Self.gateway { $0.idleTimeout = 2 }
        try gateway.send(ErrorCodeTests.incompleteExchange)
        gateway.advance(1)
        try gateway.send("&more=1")
        gateway.advance(1.999)
        #expect(try gateway.written().isEmpty && gateway.channel.isActive, "the clock runs from the last bytes read")
        gateway.advance(0.001)
        let answer = try gateway.written()
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && answer.contains("Connection: close\r\n"), "\(answer)")
        #expect(!gateway.channel.isActive)
        #expect(gateway.metric("samlgate_errors_total{code=\"malformed_request\"}") == 1)
        #expect(gateway.upstreams.opened.isEmpty, "nothing forwarded")
    }

    @Test("a client that never reads the last answer of a closing connection: closed at idle-timeout, not held open")
    func unreadClosingAnswer() throws {
        let gateway = try Self.gateway { $0.idleTimeout = 5 }
        let client = HeldWrites()
        try gateway.channel.pipeline.syncOperations.addHandler(client, position: .first)
        try gateway.send("GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        gateway.advance(4.999)
        #expect(gateway.channel.isActive, "the answer is still being written")
        gateway.advance(0.001)
        #expect(!gateway.channel.isActive)
    }

    @Test("a client that half-closes once its closing answer has ended, before reading it, still gets the whole answer, then the close")
    func halfCloseAfterClosingRequest() throws {
        let gateway = try Self.gateway()
        let client = HeldWrites()
        try gateway.channel.pipeline.syncOperations.addHandler(client, position: .first)
        try gateway.send(Self.get.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"))
        try gateway.upstreams.answer("HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n" + String(repeating: "m", count: 40_000))
        gateway.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(gateway.channel.isActive, "the half-close does not cut the answer short")
        client.release()
        let answer = try gateway.written()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix(String(repeating: "m", count: 40_000)), "\(answer.prefix(200))")
        #expect(!gateway.channel.isActive)
    }

    @Test("a token exchange from head to answer: verified in line, the cookbook's encoding forwarded, the backend's answer relayed")
    func exchange() throws {
        let gateway = try Self.gateway()
        let saml = GatewayHarness.issue()
        let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(saml)))
        try gateway.send(
            "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        let forwarded = try gateway.upstreams.received()
        let (head, sent) = try #require(forwarded.split(separator: "\r\n\r\n", maxSplits: 1).map(String.init).pairs)
        #expect(head.hasPrefix("POST /api/v1/tokens/authn HTTP/1.1\r\n"), "\(head)")
        #expect(sent.contains("SAMLResponse=" + GatewayHarness.cookbook(saml)), "the cookbook's encoding of the verified response")
        try gateway.upstreams.answer("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try gateway.statuses() == ["HTTP/1.1 201 Created"])
        #expect(gateway.metric("samlgate_requests_total{route=\"v1_tokens_authn\",status=\"201\"}") == 1)
    }

    @Test("a forged exchange is refused in line and nothing reaches the backend")
    func exchangeRefused() throws {
        let gateway = try Self.gateway()
        var saml = GatewayHarness.issue()
        let at = try #require(saml.firstRange(of: Array("alice".utf8)))
        saml.replaceSubrange(at, with: Array("mally".utf8))
        let body = GatewayHarness.form(GatewayHarness.v1Fields(GatewayHarness.base64(saml)))
        try gateway.send(
            "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        let answer = try gateway.written()
        #expect(answer.hasPrefix("HTTP/1.1 4"), "\(answer)")
        #expect(gateway.upstreams.opened.isEmpty)
    }
}

extension Array where Element == String {
    /// The two elements of a two-element array.
    fileprivate var pairs: (String, String)? { count == 2 ? (self[0], self[1]) : nil }
}
