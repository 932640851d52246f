import GatewayTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Gateway

/// The connection handler on an `EmbeddedChannel` behind NIO's HTTP/1.1 codec, as the listener
/// builds its pipeline: requests as bytes in, answers as bytes out, no socket and no other
/// thread (the local endpoints and the refusals need no backend). The socket tests cover the
/// same behaviours end to end; these pin the handler's own transitions.
@Suite("Connection handler on an EmbeddedChannel")
struct ConnectionHandlerEmbeddedTests {
    /// One embedded client connection of a gateway whose backend is never reached.
    final class Connection {
        let channel = EmbeddedChannel()
        let core: GatewayCore

        init() throws {
            var configuration = GatewayConfiguration()
            configuration.trustStore = try GatewayHarness.makeTrustStore()
            configuration.upstreams = ["http://127.0.0.1:9"]
            let logger = Logger(label: "embedded") { _ in SwiftLogNoOpLogHandler() }
            core = try GatewayCore(configuration: configuration, logger: logger, eventLoopGroup: channel.embeddedEventLoop)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try pipeline.addHandler(GatewayConnectionHandler(core: core, pool: core.upstream.pool(on: channel.embeddedEventLoop)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40_000)).wait()
        }

        deinit {
            core.pool.shutdown()
        }

        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
        }

        /// Everything written to the client so far.
        func written() throws -> String {
            var out = ""
            while let part = try channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: part) }
            return out
        }

        /// The status lines written so far, in order (a body runs straight into the next answer's head; `\r\n` is one `Character`).
        func statuses() throws -> [String] {
            try written().matches(of: /HTTP\/1\.1 [0-9]{3} [A-Za-z ]+\r\n/).map { String($0.output.dropLast()) }
        }
    }

    static let health = "GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n"

    @Test("GET /healthz: 200 with its X-Request-Id, the connection kept; two requests pipelined in one read are answered in order")
    func keepAliveAndPipelining() throws {
        let connection = try Connection()
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
        let connection = try Connection()
        try connection.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n" + Self.health)
        let answer = try connection.written()
        #expect(answer.contains("Connection: close") && answer.components(separatedBy: "HTTP/1.1 ").count == 2, "\(answer)")
        #expect(!connection.channel.isActive)
    }

    @Test("a head that is not HTTP/1.1 gets the parser's plain 400 with Connection: close, and the connection closes")
    func malformedHead() throws {
        let connection = try Connection()
        // The decoder's error reaches the handler (errorCaught), which answers; nothing is rethrown.
        try connection.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nBad Header\r\n\r\n")
        let answer = try connection.written()
        #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && answer.contains("Connection: close"), "\(answer)")
        #expect(!connection.channel.isActive)
    }

    @Test("a client that does not take its answers: the next request waits until the channel is writable again, then is answered")
    func unreadAnswers() throws {
        let connection = try Connection()
        connection.channel.isWritable = false
        try connection.send(Self.health)
        #expect(try connection.written().isEmpty, "no request is begun while the client leaves its answers unread")
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try connection.statuses() == ["HTTP/1.1 200 OK"])
    }

    @Test("half-close and quiesce of an idle connection close it; so does quiesce while the rest of an answered request's body is still coming")
    func halfCloseAndQuiesce() throws {
        let halfClosed = try Connection()
        halfClosed.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!halfClosed.channel.isActive)

        let quiesced = try Connection()
        quiesced.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!quiesced.channel.isActive)

        // /healthz is answered on its head; its announced body has not arrived (draining).
        let draining = try Connection()
        try draining.send("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: 4\r\n\r\n")
        #expect(try draining.statuses() == ["HTTP/1.1 200 OK"])
        #expect(draining.channel.isActive, "kept while the rest of the body is read and dropped")
        try draining.send("ab")
        draining.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!draining.channel.isActive, "an answered request's remaining body is not waited for at quiesce")
    }
}
