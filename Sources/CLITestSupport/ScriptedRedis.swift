import Foundation
import NIOCore
import NIOPosix

/// A fake Redis on a free loopback port that answers each command with the raw RESP reply
/// `reply` returns for it: for what a real `redis-server` cannot be made to answer on demand
/// (`-LOADING`, `-MASTERDOWN`, an unknown command, a reply of the wrong type). It records the
/// connections it accepted and the names of the commands it got (never their arguments).
///
/// Use ``with(reply:_:)``: it stops the server when the body returns or throws.
package final class ScriptedRedis: @unchecked Sendable {
    package let port: Int
    private let channel: any Channel
    private let lock = NSLock()
    private var accepted = 0
    private var names: [String] = []

    /// `reply` gets the command's arguments (the name first) and returns the reply's bytes, e.g.
    /// `"+OK\r\n"` or `"-LOADING Redis is loading the dataset in memory\r\n"`.
    ///
    /// `flood`, when it returns bytes for a command, makes the server write them again and again
    /// after the reply, as fast as the client reads, until the connection closes: a hostile or
    /// broken Redis that never ends its reply.
    package static func with<T>(
        reply: @escaping @Sendable ([String]) -> String,
        flood: @escaping @Sendable ([String]) -> String? = { _ in nil },
        _ body: (ScriptedRedis) async throws -> T
    ) async throws -> T {
        let server = try await ScriptedRedis(reply: reply, flood: flood)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    init(reply: @escaping @Sendable ([String]) -> String, flood: @escaping @Sendable ([String]) -> String? = { _ in nil }) async throws {
        let box = ScriptedRedisCallbacks()
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedRedisHandler(reply: reply, flood: flood, callbacks: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
        box.server = self
    }

    package var url: String { "redis://127.0.0.1:\(port)" }

    /// Connections accepted so far.
    package var connections: Int { lock.withLock { accepted } }

    /// The names of the commands received so far, in upper case, in order.
    package var commands: [String] { lock.withLock { names } }

    package func stop() async {
        try? await channel.close()
    }

    func connected() {
        lock.withLock { accepted += 1 }
    }

    func received(_ name: String) {
        lock.withLock { names.append(name.uppercased()) }
    }
}

// MARK: - Connections

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

// MARK: - Callbacks

/// Where a ``ScriptedRedis`` connection reports to: set once the server is bound (the child
/// initializer is built before the server object exists).
final class ScriptedRedisCallbacks: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: ScriptedRedis?

    var server: ScriptedRedis? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
