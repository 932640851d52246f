import GatewayTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Gateway

/// The connection handler's own transitions on an ``EmbeddedGateway`` (the local endpoints and
/// the refusals need no backend). The socket tests cover the same behaviours end to end.
@Suite("Connection handler on an EmbeddedChannel")
struct ConnectionHandlerEmbeddedTests {
    static let health = "GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n"

    @Test("GET /healthz: 200 with its X-Request-Id, the connection kept; two requests pipelined in one read are answered in order")
    func keepAliveAndPipelining() throws {
        let connection = try EmbeddedGateway()
        try connection.send(Self.health)
        let first = try connection.written()
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n") && first.contains("X-Request-Id: ") && first.hasSuffix("{\"status\":\"up\"}"), "\(first)")
        #expect(!first.lowercased().contains("connection: close"))
        #expect(connection.channel.isActive)

        try connection.send(Self.health + "GET /api/v1/tokens/authn/more HTTP/1.1\r\nHost: gateway.test\r\n\r\n" + Self.health)
        let statuses = try connection.statuses()
        #expect(statuses == ["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"], "\(statuses)")
        #expect(connection.channel.isActive)
    }

    @Test("Connection: close is answered with Connection: close, and the connection closes; what was pipelined behind it is dropped")
    func closeAfterAnswer() throws {
        let connection = try EmbeddedGateway()
        try connection.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n" + Self.health)
        let answer = try connection.written()
        #expect(answer.contains("Connection: close") && answer.components(separatedBy: "HTTP/1.1 ").count == 2, "\(answer)")
        #expect(!connection.channel.isActive)
    }

    @Test("a head that is not HTTP/1.1 gets the parser's plain 400 with Connection: close, and the connection closes")
    func malformedHead() throws {
        let connection = try EmbeddedGateway()
        // The decoder's error reaches the handler (errorCaught), which answers; nothing is rethrown.
        try connection.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nBad Header\r\n\r\n")
        let answer = try connection.written()
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && answer.contains("Connection: close"), "\(answer)")
        #expect(!connection.channel.isActive)
    }

    @Test("a client that does not take its answers: the next request waits until the channel is writable again, then is answered")
    func unreadAnswers() throws {
        let connection = try EmbeddedGateway()
        connection.channel.isWritable = false
        try connection.send(Self.health)
        #expect(try connection.written().isEmpty, "no request is begun while the client leaves its answers unread")
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try connection.statuses() == ["HTTP/1.1 200 OK"])
    }

    @Test("half-close and quiesce of an idle connection close it; so does quiesce while the rest of an answered request's body is still coming")
    func halfCloseAndQuiesce() throws {
        let halfClosed = try EmbeddedGateway()
        halfClosed.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!halfClosed.channel.isActive)

        let quiesced = try EmbeddedGateway()
        quiesced.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!quiesced.channel.isActive)

        // /healthz is answered on its head; its announced body has not arrived (draining).
        let draining = try EmbeddedGateway()
        try draining.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: 4\r\n\r\n")
        #expect(try draining.statuses() == ["HTTP/1.1 200 OK"])
        #expect(draining.channel.isActive, "kept while the rest of the body is read and dropped")
        try draining.send("ab")
        draining.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!draining.channel.isActive, "an answered request's remaining body is not waited for at quiesce")
    }
}
