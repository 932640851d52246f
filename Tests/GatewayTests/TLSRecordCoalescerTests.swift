import GatewayTestSupport
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import Testing

@testable import Gateway

/// The writes of one flush sealed as one TLS record (``TLSRecordCoalescer``): on an embedded
/// channel, and on the wire of a real TLS listener, counted before the client decrypts them.
@Suite("TLS record coalescer")
struct TLSRecordCoalescerTests {
    static func bytes(_ count: Int, _ byte: UInt8) -> ByteBuffer {
        ByteBuffer(repeating: byte, count: count)
    }

    static func joined(_ parts: [ByteBuffer]) -> ByteBuffer {
        parts.reduce(into: ByteBuffer()) { all, part in all.writeImmutableBuffer(part) }
    }

    static func written(_ channel: EmbeddedChannel) throws -> [ByteBuffer] {
        var out: [ByteBuffer] = []
        while let part = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = part else {
                Issue.record("a file region")
                continue
            }
            out.append(buffer)
        }
        return out
    }

    @Test("small writes of one flush leave as one write, in order, every promise kept; a flush of one write is passed on as it is")
    func joins() throws {
        let channel = EmbeddedChannel(handler: TLSRecordCoalescer())
        let promises = (0..<4).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        channel.write(IOData.byteBuffer(Self.bytes(100, 1)), promise: promises[0])
        channel.write(IOData.byteBuffer(Self.bytes(0, 0)), promise: promises[1])
        channel.write(IOData.byteBuffer(Self.bytes(200, 2)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(300, 3)), promise: promises[2])
        #expect(try Self.written(channel).isEmpty, "nothing passed on before the flush")
        channel.flush()
        let out = try Self.written(channel)
        #expect(out == [Self.joined([Self.bytes(100, 1), Self.bytes(200, 2), Self.bytes(300, 3)])])
        channel.writeAndFlush(IOData.byteBuffer(Self.bytes(50, 4)), promise: promises[3])
        #expect(try Self.written(channel) == [Self.bytes(50, 4)])
        for promise in promises {
            var succeeded = false
            promise.futureResult.assumeIsolated().whenSuccess { succeeded = true }
            #expect(succeeded, "every promise kept")
        }
        _ = try channel.finish()
    }

    @Test("writes beyond one record: what is held leaves first, a large write goes on uncopied, order kept")
    func largeWrites() throws {
        let channel = EmbeddedChannel(handler: TLSRecordCoalescer())
        channel.write(IOData.byteBuffer(Self.bytes(10_000, 1)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(5_000, 2)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(40_000, 3)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(2_000, 4)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(16_000, 5)), promise: nil)
        channel.flush()
        let out = try Self.written(channel)
        #expect(out.map(\.readableBytes) == [15_000, 40_000, 2_000, 16_000])
        #expect(Self.joined(out) == Self.joined([(10_000, 1), (5_000, 2), (40_000, 3), (2_000, 4), (16_000, 5)].map(Self.bytes)))
        _ = try channel.finish()
    }

    @Test("two joined writes in one flush: each its own bytes, though the first is still held downstream when the second is joined")
    func twoJoins() throws {
        let channel = EmbeddedChannel(handler: TLSRecordCoalescer())
        for byte in 1...4 { channel.write(IOData.byteBuffer(Self.bytes(6_000, UInt8(byte))), promise: nil) }
        channel.flush()
        #expect(
            try Self.written(channel) == [
                Self.joined([Self.bytes(6_000, 1), Self.bytes(6_000, 2)]), Self.joined([Self.bytes(6_000, 3), Self.bytes(6_000, 4)]),
            ])
        _ = try channel.finish()
    }

    @Test("a close of either kind passes on what is held before it")
    func closes() throws {
        for mode in [CloseMode.output, .all] {
            let recorder = WriteRecorder()
            let channel = EmbeddedChannel(handlers: [recorder, TLSRecordCoalescer()])
            channel.write(IOData.byteBuffer(Self.bytes(10, 1)), promise: nil)
            channel.write(IOData.byteBuffer(Self.bytes(10, 2)), promise: nil)
            #expect(recorder.written.isEmpty)
            channel.close(mode: mode, promise: nil)
            #expect(recorder.written == [Self.joined([Self.bytes(10, 1), Self.bytes(10, 2)])], "\(mode)")
            _ = try? channel.finish()
        }
    }

    @Test("over a real TLS listener: a refusal's head and body reach the client in one record (TLS 1.2: no tickets among them)")
    func oneRecordOnTheWire() async throws {
        try await TLSListenerTests.withTLS { h, pki in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(pki.caPath))
            tls.maximumTLSVersion = .tlsv12
            tls.applicationProtocols = ["http/1.1"]
            let context = try NIOSSLContext(configuration: tls)
            let counter = RecordCounter()
            let reader = PlainReader()
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(counter)
                        try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                        try pipeline.addHandler(reader)
                    }
                }
                .connect(host: "127.0.0.1", port: TLSListenerTests.port(h)).get()
            // A v1 exchange without its SAMLResponse: refused by the gateway itself, head and body in one flush.
            let request =
                "POST /api/v1/tokens/authn HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: 13\r\nConnection: close\r\n\r\nrequestor=REF"
            try await channel.writeAndFlush(ByteBuffer(string: request))
            try await channel.closeFuture.get()
            let answer = try await channel.eventLoop.submit { (String(buffer: reader.received), counter.applicationData) }.get()
            #expect(answer.0.hasPrefix("HTTP/1.1 400") && answer.0.hasSuffix("}"), "\(answer.0.debugDescription)")
            #expect(answer.1 == 1, "application-data records: \(answer.1)")
        }
    }

    /// What is written towards the socket, flushed or not.
    final class WriteRecorder: ChannelOutboundHandler {
        typealias OutboundIn = IOData
        private(set) var written: [ByteBuffer] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .byteBuffer(let buffer) = unwrapOutboundIn(data) { written.append(buffer) }
            context.write(data, promise: promise)
        }
    }

    /// Counts the TLS records of each type that arrive, before TLS reads them.
    final class RecordCounter: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private var pending = ByteBuffer()
        private(set) var applicationData = 0

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            pending.writeBuffer(&bytes)
            while pending.readableBytes >= 5, let type = pending.getInteger(at: pending.readerIndex, as: UInt8.self),
                let length = pending.getInteger(at: pending.readerIndex + 3, as: UInt16.self), pending.readableBytes >= 5 + Int(length)
            {
                if type == 23 { applicationData += 1 }
                pending.moveReaderIndex(forwardBy: 5 + Int(length))
            }
            context.fireChannelRead(data)
        }
    }

    /// Keeps what TLS decrypted.
    final class PlainReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private(set) var received = ByteBuffer()

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // The server's close after its answer may come without waiting for the client's alert.
            context.close(promise: nil)
        }
    }
}
