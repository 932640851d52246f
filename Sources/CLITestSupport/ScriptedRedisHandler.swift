import NIOCore

/// One connection of a ``ScriptedRedis``: reads RESP arrays of bulk strings (what clients
/// send) and writes the scripted reply to each, in order.
final class ScriptedRedisHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reply: @Sendable ([String]) -> String
    private let flood: @Sendable ([String]) -> String?
    private let callbacks: ScriptedRedisCallbacks
    private var buffered = ByteBuffer()

    init(reply: @escaping @Sendable ([String]) -> String, flood: @escaping @Sendable ([String]) -> String?, callbacks: ScriptedRedisCallbacks) {
        self.reply = reply
        self.flood = flood
        self.callbacks = callbacks
    }

    func channelActive(context: ChannelHandlerContext) {
        callbacks.server?.connected()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        var answered = false
        while let command = Self.command(from: &buffered) {
            if let name = command.first { callbacks.server?.received(name) }
            context.write(wrapOutboundOut(ByteBuffer(string: reply(command))), promise: nil)
            answered = true
            if let chunk = flood(command) {
                context.flush()
                pump(context: context, chunk: ByteBuffer(string: String(repeating: chunk, count: max(1, 16_384 / max(chunk.utf8.count, 1)))))
                return
            }
        }
        if answered { context.flush() }
    }

    /// Writes `chunk` again each time the last one was taken by the client, until the connection closes.
    private func pump(context: ChannelHandlerContext, chunk: ByteBuffer) {
        guard context.channel.isActive else { return }
        // The next write from a fresh event-loop task: a write taken at once would otherwise recurse.
        context.writeAndFlush(wrapOutboundOut(chunk)).assumeIsolated().whenSuccess { [self] in
            context.eventLoop.assumeIsolated().execute { self.pump(context: context, chunk: chunk) }
        }
    }

    /// One `*<n>` array of `$<len>` bulk strings from the front of `buffer`, consumed; `nil`
    /// (nothing consumed) until it is complete.
    static func command(from buffer: inout ByteBuffer) -> [String]? {
        var view = buffer
        func line() -> String? {
            guard let cr = view.readableBytesView.firstIndex(of: UInt8(ascii: "\r")) else { return nil }
            let length = cr - view.readerIndex
            guard view.readableBytes >= length + 2 else { return nil }
            let text = view.readString(length: length)
            view.moveReaderIndex(forwardBy: 2)
            return text
        }
        guard let head = line(), head.first == "*", let count = Int(head.dropFirst()) else { return nil }
        var arguments: [String] = []
        for _ in 0..<max(count, 0) {
            guard let size = line(), size.first == "$", let length = Int(size.dropFirst()),
                view.readableBytes >= length + 2, let text = view.readString(length: length)
            else { return nil }
            view.moveReaderIndex(forwardBy: 2)
            arguments.append(text)
        }
        buffer = view
        buffer.discardReadBytes()
        return arguments
    }
}
