import NIOCore
import NIOSSL

/// A small Redis client on SwiftNIO: only what the gateway's shared replay store needs (any
/// command as bulk strings, AUTH and SELECT at login, pipelining, timeouts, reconnection), with
/// one ``RESPConnectionPool`` per event loop, as the gateway keeps its upstream connections.
///
/// Call ``send(_:on:)`` on the event loop it names: the command and its reply stay on that loop.
package final class RESPClient: Sendable {
    package let url: RedisURL
    private let health = RESPHealth()
    /// Keyed by the event loop's identity; each box is used only on its loop.
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<RESPConnectionPool>]

    /// - Parameters:
    ///   - connectionsPerLoop: connections each event loop keeps (commands are pipelined on each).
    ///   - connectTimeout: TCP (and TLS) connect timeout.
    ///   - commandTimeout: a reply later than this fails the command and drops its connection.
    ///   - trustedCertificatesFile: for `rediss://`, a PEM file of the certificate authorities to
    ///     trust instead of the system's (a Redis with a private CA). Either way a host name in
    ///     the URL must be one of the certificate's DNS names (``RESPServerIdentity``), an address
    ///     one of its IP addresses.
    package init(
        url: RedisURL, eventLoopGroup: any EventLoopGroup, connectionsPerLoop: Int = 1,
        connectTimeout: TimeAmount, commandTimeout: TimeAmount, trustedCertificatesFile: String? = nil
    ) throws {
        self.url = url
        var tls: NIOSSLContext?
        if url.tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let trustedCertificatesFile {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(trustedCertificatesFile))
            }
            tls = try NIOSSLContext(configuration: configuration)
        }
        var pools: [ObjectIdentifier: NIOLoopBoundBox<RESPConnectionPool>] = [:]
        for eventLoop in eventLoopGroup.makeIterator() {
            let pool = RESPConnectionPool(
                eventLoop: eventLoop, url: url, tls: tls, size: connectionsPerLoop, connectTimeout: connectTimeout,
                commandTimeout: commandTimeout, health: health)
            pools[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue(pool, eventLoop: eventLoop)
        }
        self.pools = pools
    }

    /// Sends `command` on `eventLoop`'s pool. Call on `eventLoop`.
    package func send(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        pools[ObjectIdentifier(eventLoop)]!.value.send(command)
    }

    /// Sends `command` from any thread (hops to `eventLoop` first).
    package func submit(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        if eventLoop.inEventLoop { return send(command, on: eventLoop) }
        return eventLoop.flatSubmit { self.send(command, on: eventLoop) }
    }

    /// Whether the last command or connection attempt, on any loop, got a usable reply from Redis
    /// (`nil`: none yet). An error reply counts as not reachable: a Redis that refuses writes
    /// (`-READONLY`, `-OOM`) is, for the replay store, as good as down.
    package var isReachable: Bool? { health.isUp }

    /// Closes every connection; commands sent afterwards fail with ``RESPError/Kind/shutdown``.
    package func shutdown() async {
        for box in pools.values {
            try? await box.eventLoop.submit { box.value.closeAll() }.get()
        }
    }
}
