import Foundation
import NIOCore
import NIOSSL
import Synchronization

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
    /// With `redis-sentinel://`: where the primary is, for every loop's pool.
    private let sentinel: RESPSentinelResolver?
    /// For a Redis Cluster (found at start-up, or at the first redirect): which node serves which
    /// slot, and a pool per node on each loop (``RESPClusterRouting``).
    let cluster: RESPClusterRouting?

    /// - Parameters:
    ///   - connectionsPerLoop: connections each event loop keeps (commands are pipelined on each).
    ///   - connectTimeout: TCP (and TLS) connect timeout.
    ///   - commandTimeout: a reply later than this fails the command and drops its connection.
    ///   - trustedCertificatesFile: for `rediss://`, a PEM file of the certificate authorities to
    ///     trust instead of the system's (a Redis with a private CA). Either way a host name in
    ///     the URL must be one of the certificate's DNS names (``RESPServerIdentity``), an address
    ///     one of its IP addresses.
    ///   - events: told as the client follows a Sentinel's failovers or a cluster's topology.
    package init(
        url: RedisURL, eventLoopGroup: any EventLoopGroup, connectionsPerLoop: Int = 1,
        connectTimeout: TimeAmount, commandTimeout: TimeAmount, trustedCertificatesFile: String? = nil,
        events: RESPTopologyEvents = RESPTopologyEvents()
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
        // After the TLS set-up, which may throw: the resolver starts polling at once.
        let sentinel = url.sentinel.map {
            RESPSentinelResolver(set: $0, eventLoop: eventLoopGroup.next(), timeout: connectTimeout, tls: tls, onSwitch: events.primarySwitched)
        }
        self.sentinel = sentinel
        var pools: [ObjectIdentifier: NIOLoopBoundBox<RESPConnectionPool>] = [:]
        for eventLoop in eventLoopGroup.makeIterator() {
            let pool = RESPConnectionPool(
                eventLoop: eventLoop, url: url, tls: tls, size: connectionsPerLoop, connectTimeout: connectTimeout,
                commandTimeout: commandTimeout, health: health, sentinel: sentinel)
            pools[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue(pool, eventLoop: eventLoop)
        }
        self.pools = pools
        cluster =
            sentinel == nil
            ? RESPClusterRouting(
                url: url, tls: tls, connectionsPerLoop: connectionsPerLoop, connectTimeout: connectTimeout, commandTimeout: commandTimeout,
                health: health, eventLoops: Array(eventLoopGroup.makeIterator()), events: events)
            : nil
    }

    /// Sends `command` on `eventLoop`'s pool (for a Redis Cluster, the pool of the node serving
    /// its key, following redirects). Call on `eventLoop`.
    package func send(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        cluster?.remember(command)
        if let cluster, cluster.isEnabled { return cluster.send(command, on: eventLoop) }
        let reply = pools[ObjectIdentifier(eventLoop)]!.value.send(command)
        guard let cluster else { return reply }
        // A node of a cluster answers for a slot it does not serve: from now on, routed by slot.
        return reply.flatMapError { error in
            guard let redirect = (error as? RESPError)?.redirect else { return eventLoop.makeFailedFuture(error) }
            cluster.enable(on: eventLoop)
            return cluster.follow(redirect, command, on: eventLoop, hops: 1)
        }
    }

    /// Routes by hash slot from now on (a Redis Cluster was found) and asks the cluster for its
    /// map; answers the slots no primary serves (0 when the map covers them all), or `nil` when
    /// no node answered `CLUSTER SLOTS`.
    package func enableCluster(on eventLoop: any EventLoop) async -> Int? {
        guard let cluster else { return nil }
        return await cluster.enableAndMap(on: eventLoop)
    }

    /// Whether commands are routed by hash slot.
    package var isCluster: Bool { cluster?.isEnabled ?? false }

    /// Sends `command` from any thread (hops to `eventLoop` first).
    package func submit(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        if eventLoop.inEventLoop { return send(command, on: eventLoop) }
        return eventLoop.flatSubmit { self.send(command, on: eventLoop) }
    }

    /// Whether the last command or connection attempt, on any loop, got a usable reply from Redis
    /// (`nil`: none yet). An error reply counts as not reachable: a Redis that refuses writes
    /// (`-READONLY`, `-OOM`) is, for the replay store, as good as down.
    package var isReachable: Bool? { health.isUp }

    /// With `redis-sentinel://`, the primary the Sentinels name now (asked when none is known);
    /// `nil` for a plain URL. Fails with ``RESPError/Kind/unsupported`` when every Sentinel that
    /// answered knows no primary of that name, ``RESPError/Kind/connect`` when none answered.
    package func sentinelPrimary(on eventLoop: any EventLoop) async throws -> RedisAddress? {
        guard let sentinel else { return nil }
        return try await sentinel.primary(on: eventLoop).get().0
    }

    /// How the store is laid out, as far as the client knows: for `/readyz`.
    package var topology: RESPTopology {
        if let sentinel { return .sentinel(primary: sentinel.current) }
        if let cluster, cluster.isEnabled { return .cluster(primaries: cluster.map.primaryCount, uncoveredSlots: cluster.map.uncovered) }
        return .single
    }

    /// Closes every connection; commands sent afterwards fail with ``RESPError/Kind/shutdown``.
    package func shutdown() async {
        sentinel?.shutdown()
        await cluster?.shutdown()
        for box in pools.values {
            try? await box.eventLoop.submit { box.value.closeAll() }.get()
        }
    }
}

// MARK: - Topology

/// What a ``RESPClient`` tells its owner as it follows the servers' topology (for metrics and
/// logs). Called on whichever event loop noticed; keep them short.
package struct RESPTopologyEvents: Sendable {
    /// The Sentinels named a primary: the one before (`nil` for the first) and the new one.
    package var primarySwitched: @Sendable (_ before: RedisAddress?, _ after: RedisAddress) -> Void = { _, _ in }
    /// A cluster node redirected a command: `-ASK` (a slot in migration) or `-MOVED`.
    package var redirected: @Sendable (_ ask: Bool) -> Void = { _ in }
    /// The cluster's slot map was asked again and answered.
    package var mapRefreshed: @Sendable () -> Void = {}

    package init() {}
}

/// The layout a ``RESPClient`` serves: one server, a primary named by Sentinels, or a cluster.
package enum RESPTopology: Sendable, Equatable {
    case single
    /// The primary the Sentinels last named (`nil` before their first answer).
    case sentinel(primary: RedisAddress?)
    /// The primaries the slot map names, and the slots it leaves to none.
    case cluster(primaries: Int, uncoveredSlots: Int)
}

// MARK: - Where Redis is

/// Where the Redis server is and how to log in: `redis://[user:password@]host[:port][/db]`, or
/// `rediss://…` for TLS. The password is kept for AUTH and never shown (``description`` masks it).
///
/// Or where the Sentinels are that know it: `redis-sentinel://[user:password@]host[:port][,host2[:port2]…][/db]#masterName`
/// (Lettuce's spelling; `rediss-sentinel://` for TLS to the Sentinels and the data nodes; a
/// Sentinel's port is 26379 unless given). The user and password are the data nodes' (Lettuce's
/// reading); a Sentinel's own password is ``RedisSentinelSet/password``, never in the URL.
/// ``host`` and ``port`` are then the first Sentinel's.
package struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int
    /// The Sentinels to ask for the primary, and the name they know it by; `nil` for a Redis at
    /// ``host``:``port`` itself.
    package var sentinel: RedisSentinelSet?
    /// Every server the URL names (`redis://h1:p1,h2:p2`: a Redis Cluster's seeds); ``host`` and
    /// ``port`` are the first.
    package var seeds: [RedisAddress] { seedList ?? [RedisAddress(host: host, port: port)] }
    package var seedList: [RedisAddress]?
    /// AUTH user (Redis 6 ACLs); `nil` with a password means the `default` user.
    package var user: String?
    package var password: String?
    /// SELECT this database after connecting (0 is Redis's default and is not sent).
    package var database: Int
    package var tls: Bool

    package init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0, tls: Bool = false) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses the URL; the error says what is wrong without repeating the text (it may hold a password).
    package init(parsing text: String) throws(RESPError) {
        func bad(_ why: String) -> RESPError {
            RESPError(
                .protocol,
                "not a redis URL (\(why)); expected redis://[user:password@]host:port[/db] or redis-sentinel://[user:password@]host:port[,host:port…][/db]#masterName"
            )
        }
        if let sentinel = try RedisSentinelSet.parse(text, bad: bad) {
            self = sentinel
            return
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw bad("unreadable")
        }
        guard scheme == "redis" || scheme == "rediss" else { throw bad("scheme must be redis or rediss") }
        guard var host = components.host, !host.isEmpty else { throw bad("no host") }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard components.query == nil, components.fragment == nil else { throw bad("no query or fragment allowed") }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw bad("port out of range") }
        var database = 0
        let path = components.path
        if !path.isEmpty && path != "/" {
            guard path.hasPrefix("/"), let number = Int(path.dropFirst()), (0...1_000_000).contains(number) else {
                throw bad("the path must be a database number")
            }
            database = number
        }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.password.flatMap { $0.isEmpty ? nil : $0 }
        guard user == nil || password != nil else { throw bad("a user needs a password") }
        self.init(host: host, port: port, user: user, password: password, database: database, tls: scheme == "rediss")
    }

    /// The URL with the password masked: safe for logs, `/readyz` and error messages.
    package var description: String {
        var login = ""
        if password != nil { login = (user ?? "") + ":***@" }
        if let seedList {
            return "\(tls ? "rediss" : "redis")://\(login)\(seedList.map(\.description).joined(separator: ","))/\(database)"
        }
        if let sentinel {
            let hosts = sentinel.addresses.map(\.description).joined(separator: ",")
            return "\(tls ? "rediss" : "redis")-sentinel://\(login)\(hosts)/\(database)#\(sentinel.masterName)"
        }
        return "\(tls ? "rediss" : "redis")://\(login)\(RedisAddress(host: host, port: port))/\(database)"
    }
}

// MARK: - Health

/// Whether Redis answered usably the last time anyone asked, across every loop's pool: what a
/// readiness probe reports without sending a command of its own.
final class RESPHealth: Sendable {
    /// 0 nothing known yet, 1 up, 2 down.
    private let state = Atomic<Int>(0)

    func record(up: Bool) {
        state.store(up ? 1 : 2, ordering: .relaxed)
    }

    var isUp: Bool? {
        switch state.load(ordering: .relaxed) {
        case 1: true
        case 2: false
        default: nil
        }
    }
}
