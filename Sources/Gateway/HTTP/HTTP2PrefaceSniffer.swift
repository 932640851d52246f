import NIOCore

/// On a plain listener with `h2c`, tells HTTP/2 with prior knowledge from HTTP/1.1 by the first
/// bytes (HTTP/2's connection preface, `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, is no HTTP/1.1 request
/// line), sets the connection up for the one it is, hands it what was read, and leaves.
///
/// At most the preface's 24 bytes are held, and for at most `header-timeout`: the first byte
/// that differs decides HTTP/1.1 (whose own parser and clocks then take it from there).
final class HTTP2PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private let core: GatewayCore
    private var buffered: ByteBuffer?
    private var timer: Scheduled<Void>?
    private var decided = false

    init(core: GatewayCore) {
        self.core = core
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(seconds: core.configuration.headerTimeout)) {
            loopBound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if decided {
            context.fireChannelRead(data)
            return
        }
        if var held = buffered {
            held.writeBuffer(&bytes)
            bytes = held
        }
        let seen = min(bytes.readableBytes, Self.preface.count)
        let matches = bytes.withUnsafeReadableBytes { raw in raw.prefix(seen).elementsEqual(Self.preface.prefix(seen)) }
        guard !matches || seen == Self.preface.count else {
            buffered = bytes
            return
        }
        decided = true
        timer?.cancel()
        buffered = nil
        do {
            try (matches ? ClientProtocol.h2c : .http1).configure(context.channel, on: context.pipeline.syncOperations, core: core, tls: nil)
        } catch {
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if decided { context.fireChannelReadComplete() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A client that half-closes before deciding sent no request; quiescing, none is taken up.
        if !decided, event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
