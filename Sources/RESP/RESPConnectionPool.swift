import NIOCore
import NIOPosix
import NIOSSL
import ServerSupport

/// The Redis connections of one event loop (a fixed number of slots, each connected on first
/// use), so a command never leaves the loop of the request that sends it and needs no locks.
///
/// A slot connects on demand and logs in (AUTH, SELECT) before any command goes out on it;
/// commands sent meanwhile wait for the login. When a connection attempt fails, the pool backs
/// off (``initialBackoff`` doubling to ``maximumBackoff``): until then commands fail at once with
/// ``RESPError/Kind/backoff`` instead of each waiting for a connect timeout against a server
/// that is down. A connection that closes (a restarted server) is replaced by the next command;
/// so is one closed after an error reply of ``RESPError/Kind/unavailable`` (a replica after a
/// failover), after the same back-off. Each connection attempt resolves the host anew.
///
/// Used only on its event loop (``RESPClient`` hands each loop its own).
final class RESPConnectionPool {
    static let initialBackoff: TimeAmount = .milliseconds(100)
    static let maximumBackoff: TimeAmount = .seconds(2)

    private struct Waiter {
        let command: RESPCommand
        let promise: EventLoopPromise<RESPValue>
    }

    private enum Slot {
        case empty
        case connecting([Waiter])
        case ready(RESPConnection)
    }

    let eventLoop: any EventLoop
    private let url: RedisURL
    private let tls: NIOSSLContext?
    private let connectTimeout: TimeAmount
    private let commandTimeout: TimeAmount
    private let health: RESPHealth
    private var slots: [Slot]
    private var cursor = 0
    private var failures = 0
    private var retryAt: NIODeadline?
    private var stopped = false
    /// With `redis-sentinel://`: who says where the primary is.
    private let sentinel: RESPSentinelResolver?
    /// The primary the ready connections were made to, and the resolver's generation then.
    private var primary: RedisAddress?
    private var generation: UInt64 = 0

    init(
        eventLoop: any EventLoop, url: RedisURL, tls: NIOSSLContext?, size: Int, connectTimeout: TimeAmount, commandTimeout: TimeAmount,
        health: RESPHealth, sentinel: RESPSentinelResolver? = nil
    ) {
        self.sentinel = sentinel
        precondition(size > 0, "a pool has at least one connection")
        self.eventLoop = eventLoop
        self.url = url
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.health = health
        slots = Array(repeating: .empty, count: size)
    }

    /// Sends `command` on the next slot (round-robin), connecting it first when needed.
    func send(_ command: RESPCommand) -> EventLoopFuture<RESPValue> {
        send(CollectionOfOne(command))
    }

    /// Sends `commands` in order on one connection (`ASKING` and the command it is for); the
    /// future is the last one's reply. Generic so that one command costs no array.
    func send<Commands: Collection<RESPCommand>>(_ commands: Commands) -> EventLoopFuture<RESPValue> {
        guard !stopped else { return eventLoop.makeFailedFuture(RESPError(.shutdown, "the Redis client is shut down")) }
        if let sentinel, sentinel.generation != generation {
            // The Sentinels name another primary: nothing more goes to the old one.
            generation = sentinel.generation
            dropReady(RESPError(.closed, "the primary moved"))
        }
        let index = cursor
        cursor = (cursor + 1) % slots.count
        switch slots[index] {
        case .ready(let connection) where connection.isActive:
            var last: EventLoopFuture<RESPValue>?
            for command in commands { last = observe(transmit(command, on: connection)) }
            return last!
        case .connecting(var waiters):
            let promises = commands.map { _ in eventLoop.makePromise(of: RESPValue.self) }
            waiters += zip(commands, promises).map { Waiter(command: $0, promise: $1) }
            slots[index] = .connecting(waiters)
            return promises[promises.count - 1].futureResult
        case .ready, .empty:
            if let retryAt, NIODeadline.now() < retryAt {
                return eventLoop.makeFailedFuture(RESPError(.backoff, "Redis was unreachable moments ago; retrying shortly"))
            }
            let promises = commands.map { _ in eventLoop.makePromise(of: RESPValue.self) }
            slots[index] = .connecting(zip(commands, promises).map { Waiter(command: $0, promise: $1) })
            connect(index)
            return promises[promises.count - 1].futureResult
        }
    }

    /// Writes `command` and its ``RESPCommand/followers`` on `connection`, one after another.
    private func transmit(_ command: RESPCommand, on connection: RESPConnection) -> EventLoopFuture<RESPValue> {
        let reply = connection.send(command)
        guard !command.followers.isEmpty else { return reply }
        // A follower's error (a `WAIT` refused or unanswered) is its reply: the command itself was
        // answered, and its owner decides what an unconfirmed write means.
        let replies = [reply] + command.followers.map { connection.send($0).recover { .error("\($0)") } }
        return EventLoopFuture.whenAllSucceed(replies, on: eventLoop).map { .array($0) }
    }

    /// Counts the outcome for ``RESPHealth``: only a reply the command can have means the store
    /// works. An error reply (`-READONLY` after a failover, `-OOM`, `-NOPERM`, …), a timeout or a
    /// closed connection counts as down, because the next command would fail the same way: a
    /// readiness probe must not say `up` while every write is refused.
    ///
    /// After ``RESPError/Kind/unavailable`` (the connection is already closed) the reconnection
    /// backs off as after a failed connect, so a Redis loading its data for a minute is not
    /// hammered with a connection per command; a usable reply ends the back-off.
    private func observe(_ reply: EventLoopFuture<RESPValue>) -> EventLoopFuture<RESPValue> {
        reply.assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.failures = 0
                self.health.record(up: true)
            case .failure(let error as RESPError) where error.redirect != nil:
                // A cluster node pointing elsewhere (a migration, a map out of date) is up.
                break
            case .failure(let error as RESPError) where error.kind == .unavailable:
                // Every command pipelined behind the refused one fails with it: one back-off
                // step per dropped connection, not one per command.
                if self.retryAt.map({ NIODeadline.now() >= $0 }) ?? true { self.backOff() }
                self.health.record(up: false)
                // A primary that turned replica (`-READONLY`): the Sentinels are asked again.
                if let primary = self.primary { self.sentinel?.invalidate(primary) }
            case .failure:
                self.health.record(up: false)
            }
        }
        return reply
    }

    /// The next connection attempt waits ``initialBackoff``, doubling per failure in a row up
    /// to ``maximumBackoff``.
    private func backOff() {
        failures += 1
        let shift = min(failures - 1, 8)
        let delay = min(Self.initialBackoff.nanoseconds << shift, Self.maximumBackoff.nanoseconds)
        retryAt = .now() + .nanoseconds(delay)
    }

    private func connect(_ index: Int) {
        guard let sentinel else {
            connect(index, to: RedisAddress(host: url.host, port: url.port))
            return
        }
        sentinel.primary(on: eventLoop).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let (address, generation)):
                if generation != self.generation {
                    self.generation = generation
                    self.dropReady(RESPError(.closed, "the primary moved"))
                }
                self.primary = address
                self.connect(index, to: address)
            case .failure(let error):
                self.connectFailed(index, (error as? RESPError) ?? RESPError(.connect, "no Sentinel answered"))
            }
        }
    }

    private func connect(_ index: Int, to address: RedisAddress) {
        let commandTimeout = self.commandTimeout
        let tls = url.tls ? self.tls : nil
        let host = address.host
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try RESPServerIdentity.addTLS(tls, host: host, to: pipeline) }
                    try pipeline.addHandler(RESPConnection(eventLoop: channel.eventLoop, commandTimeout: commandTimeout))
                }
            }
            .connect(host: address.host, port: address.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    guard let connection = try? channel.pipeline.syncOperations.handler(type: RESPConnection.self) else {
                        channel.close(promise: nil)
                        self.connectFailed(index, RESPError(.connect, "connection pipeline missing"))
                        return
                    }
                    self.logIn(index, connection)
                case .failure(let error):
                    self.sentinel?.invalidate(address)
                    self.connectFailed(index, RESPError(.connect, "cannot connect to \(self.url) at \(address): \(error)"))
                }
            }
    }

    /// AUTH and SELECT, answered before any waiting command is written: a command sent to the
    /// wrong database would record its key where no other replica looks.
    private func logIn(_ index: Int, _ connection: RESPConnection) {
        var steps: [EventLoopFuture<RESPValue>] = []
        if let password = url.password {
            steps.append(connection.send(url.user.map { RESPCommand("AUTH", $0, password) } ?? RESPCommand("AUTH", password)))
        }
        if url.database != 0 {
            steps.append(connection.send(RESPCommand("SELECT", String(url.database))))
        }
        if sentinel != nil {
            // What a Sentinel named may have turned replica since: written to, it would take the
            // records and lose them to its primary.
            steps.append(
                connection.send(RESPCommand("INFO", "replication")).flatMapThrowing { reply in
                    guard case .bulkString(let info) = reply, String(buffer: info).contains("role:master") else {
                        throw RESPError(.unavailable, "the server the Sentinels named is not a primary (yet)", command: "INFO")
                    }
                    return reply
                })
        }
        EventLoopFuture.whenAllSucceed(steps, on: eventLoop).assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.connected(index, connection)
            case .failure(let error):
                connection.close(RESPError(.closed, "login failed"))
                if let primary = self.primary { self.sentinel?.invalidate(primary) }
                self.connectFailed(index, (error as? RESPError) ?? RESPError(.connect, "login failed"))
            }
        }
    }

    private func connected(_ index: Int, _ connection: RESPConnection) {
        guard !stopped, case .connecting(let waiters) = slots[index] else {
            connection.close(RESPError(.shutdown, "the Redis client is shut down"))
            return
        }
        // `failures` is reset by the first usable reply, not here: a server that accepts
        // connections but refuses every command (`-LOADING`) keeps the back-off growing.
        retryAt = nil
        slots[index] = .ready(connection)
        connection.onClose = { [weak self, weak connection] in
            guard let self, let connection, case .ready(let current) = self.slots[index], current === connection else { return }
            self.slots[index] = .empty
        }
        for waiter in waiters {
            observe(transmit(waiter.command, on: connection)).cascade(to: waiter.promise)
        }
    }

    private func connectFailed(_ index: Int, _ error: RESPError) {
        backOff()
        health.record(up: false)
        guard case .connecting(let waiters) = slots[index] else { return }
        slots[index] = .empty
        for waiter in waiters { waiter.promise.fail(error) }
    }

    /// Closes the connections made (to a primary that is no longer one); the next commands connect anew.
    private func dropReady(_ error: RESPError) {
        for index in slots.indices {
            guard case .ready(let connection) = slots[index] else { continue }
            slots[index] = .empty
            connection.close(error)
        }
    }

    /// Closes every connection; later commands fail with ``RESPError/Kind/shutdown``.
    func closeAll() {
        stopped = true
        for index in slots.indices {
            let slot = slots[index]
            slots[index] = .empty
            switch slot {
            case .ready(let connection): connection.close(RESPError(.shutdown, "the Redis client is shut down"))
            case .connecting(let waiters):
                for waiter in waiters { waiter.promise.fail(RESPError(.shutdown, "the Redis client is shut down")) }
            case .empty: break
            }
        }
    }
}

// MARK: - The server's identity over TLS

/// The check `rediss://<name>` adds to NIOSSL's: the certificate must name the host through a
/// DNS name. NIOSSL's host-name verification accepts a certificate when any of its subject
/// alternative names matches, an IP address one included (matched against the address
/// connected to), so a certificate whose only name is the server's IP would stand for any host
/// name that resolves there: whoever can steer name resolution and holds a trusted certificate
/// for their own address could pose as Redis. With an address in the URL NIOSSL is given no
/// name and matches IP address names only, which is what is wanted there.
enum RESPServerIdentity {
    /// TLS to the server at `host` on `pipeline`. An address has no name to check against the
    /// certificate's: NIOSSL then matches IP address names only. A name must be a DNS name of
    /// the certificate, not merely resolve to an address it names.
    static func addTLS(_ context: NIOSSLContext, host: String, to pipeline: ChannelPipeline.SynchronousOperations) throws {
        if (try? SocketAddress(ipAddress: host, port: 0)) == nil {
            try pipeline.addHandler(
                NIOSSLClientHandler._makeSSLClientHandler(
                    context: context, serverHostname: host, additionalPeerCertificateVerificationCallback: verifier(host: host)))
        } else {
            try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
        }
    }

    /// Runs after NIOSSL's chain and host-name checks, before anything (AUTH) is written: fails
    /// the handshake unless a DNS name of `certificate` matches `host`. A certificate with no
    /// subject alternative names at all was matched by NIOSSL on its common name, a DNS name too.
    static func verifier(host: String) -> _NIOAdditionalPeerCertificateVerificationCallback {
        { certificate, channel in
            guard dnsNameMatches(host: host, certificate: certificate) else {
                return channel.eventLoop.makeFailedFuture(
                    RESPError(.connect, "the Redis server's certificate does not name \(host) as a DNS name"))
            }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
    }

    static func dnsNameMatches(host: String, certificate: NIOSSLCertificate) -> Bool {
        var names: [String] = []
        var any = false
        for name in certificate._subjectAlternativeNames() {
            any = true
            guard name.nameType == .dnsName else { continue }
            names.append(name.contents.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) })
        }
        guard any else { return true }
        return names.contains { CertificateName.matches(host: host, dnsName: $0) }
    }
}
