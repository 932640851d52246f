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
