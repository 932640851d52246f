import NIOCore
import NIOHTTP1

/// One HTTP/1.1 client connection of the data plane: its channel's events go to the
/// connection's ``RequestDriver``, which writes its answers and asks for reads through this
/// handler (its ``RequestTransport``). Behind swift-nio's HTTP/1 codec.
final class GatewayConnectionHandler: ChannelDuplexHandler, RequestTransport {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let driver: RequestDriver
    private var context: ChannelHandlerContext?

    /// - Parameters:
    ///   - tls: the connection's TLS session, `nil` on a plain listener.
    ///   - probesOnly: the probe listener's: `/healthz`, `/readyz`, `/metrics` and nothing else.
    init(core: GatewayCore, eventLoop: any EventLoop, tls: TLSSession? = nil, probesOnly: Bool = false) {
        driver = RequestDriver(core: core, eventLoop: eventLoop, tls: tls, probesOnly: probesOnly)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        driver.attach(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        driver.detach()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        driver.received(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        driver.readComplete()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if driver.readRequested() { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { driver.becameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            driver.inputClosed()
        } else if event is ChannelShouldQuiesceEvent {
            driver.quiesce()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        driver.failed(error)
    }

    /// Also reached from inside a write to a connection the client has closed (see ``RequestDriver/inactive()``).
    func channelInactive(context: ChannelHandlerContext) {
        driver.inactive()
        context.fireChannelInactive()
    }

    // MARK: - RequestTransport

    var isWritable: Bool { context?.channel.isWritable ?? false }

    var remoteAddress: SocketAddress? { context?.channel.remoteAddress }

    func write(_ part: HTTPServerResponsePart) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() {
        context?.flush()
    }

    func writeAndFlush(_ part: HTTPServerResponsePart, thenClose: Bool) {
        guard let context else { return }
        guard thenClose else { return context.writeAndFlush(wrapOutboundOut(part), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(part)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func read() {
        context?.read()
    }

    func close() {
        context?.close(promise: nil)
    }

    /// One answer at a time: its backend is read as fast as the client takes it (writability).
    func mayRead() -> Bool { true }
    func stoppedReading() {}
    var holdsTooMuch: Bool { false }
    func readWhenRoom() {}
}
