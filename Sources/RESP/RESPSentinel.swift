import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A Redis server's address.
package struct RedisAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The Sentinels of a `redis-sentinel://` URL and the name they know the primary by.
package struct RedisSentinelSet: Sendable, Equatable {
    package var addresses: [RedisAddress]
    package var masterName: String
    /// The Sentinels' own password (`requirepass` in sentinel.conf), sent as `AUTH` before any
    /// question; never part of the URL, whose password is the data nodes'.
    package var password: String?

    /// A `redis-sentinel://` or `rediss-sentinel://` URL read whole, or a `redis://`/`rediss://`
    /// one naming several servers (a cluster's seeds, comma-separated); `nil` for anything else
    /// (the caller reads those). Each problem its own message, never the text itself.
    static func parse(_ text: String, bad: (String) -> RESPError) throws(RESPError) -> RedisURL? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        var rest = Substring(text[schemeEnd.upperBound...])
        let sentinel = scheme == "redis-sentinel" || scheme == "rediss-sentinel"
        let seeds = (scheme == "redis" || scheme == "rediss") && rest.prefix { $0 != "/" && $0 != "#" && $0 != "?" }.contains(",")
        guard sentinel || seeds else { return nil }
        var masterName = ""
        if sentinel {
            guard let hash = rest.lastIndex(of: "#") else { throw bad("a Sentinel URL needs #masterName at its end") }
            masterName = String(rest[rest.index(after: hash)...]).removingPercentEncoding ?? ""
            guard !masterName.isEmpty, masterName.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw bad("a Sentinel URL needs #masterName at its end")
            }
            rest = rest[..<hash]
        } else if rest.contains("#") {
            throw bad("no query or fragment allowed")
        }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let login = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = login.firstIndex(of: ":") {
                user = String(login[..<colon]).removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
                password = String(login[login.index(after: colon)...]).removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
            } else {
                password = String(login).removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
            }
            guard user == nil || password != nil else { throw bad("a user needs a password") }
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let number = Int(path), (0...1_000_000).contains(number) else { throw bad("the path must be a database number") }
                database = number
            }
            rest = rest[..<slash]
        }
        guard !rest.contains("?") else { throw bad("no query allowed") }
        var addresses: [RedisAddress] = []
        for item in rest.split(separator: ",", omittingEmptySubsequences: false) {
            addresses.append(try address(item, defaultPort: sentinel ? 26379 : 6379, bad: bad))
        }
        guard !addresses.isEmpty else { throw bad("no host") }
        var url = RedisURL(
            host: addresses[0].host, port: addresses[0].port, user: user, password: password, database: database,
            tls: scheme == "rediss-sentinel" || scheme == "rediss")
        if sentinel {
            url.sentinel = RedisSentinelSet(addresses: addresses, masterName: masterName)
        } else {
            url.seedList = addresses
        }
        return url
    }

    /// `host[:port]`, `[v6][:port]`; `defaultPort` when no port is given.
    private static func address(_ item: Substring, defaultPort: Int, bad: (String) -> RESPError) throws(RESPError) -> RedisAddress {
        var host = item
        var port = defaultPort
        if item.hasPrefix("[") {
            guard let close = item.firstIndex(of: "]") else { throw bad("unreadable host") }
            host = item[item.index(after: item.startIndex)..<close]
            let after = item[item.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { throw bad("unreadable port") }
                port = number
            }
        } else if let colon = item.lastIndex(of: ":") {
            host = item[..<colon]
            guard let number = Int(item[item.index(after: colon)...]) else { throw bad("unreadable port") }
            port = number
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0 == " " }) else { throw bad("no host") }
        guard (1...65535).contains(port) else { throw bad("port out of range") }
        return RedisAddress(host: String(host), port: port)
    }
}

/// Which server is the primary of a `redis-sentinel://` URL, as its Sentinels say, for every
/// event loop's pool (``RESPConnectionPool``):
///
/// - **Asked, then cached.** `SENTINEL get-master-addr-by-name` of each Sentinel in turn until
///   one names it; the one that answered is asked first next time. A pool connects to the cached
///   address and checks, before any command, that the server there says `role:master`.
/// - **Followed.** A subscription to a Sentinel's `+switch-master` announces each failover; and
///   every ``pollInterval`` the Sentinel is asked again, should a message be missed. A new
///   primary replaces the cached one and moves ``generation`` on, and every pool drops its
///   connections to the old primary before its next command. A pool that meets `-READONLY` (or
///   another refusal that closes the connection), a failed login or a failed connect
///   ``invalidate(_:)``s the cache: its next connection asks again. So a planned
///   failover (whose old primary keeps accepting writes for seconds, then discards them) is
///   followed within a poll, not when the old primary first refuses a write.
/// - **Shared.** One per client, used from every loop (a lock around a few fields).
final class RESPSentinelResolver: Sendable {
    static let pollInterval: TimeAmount = .seconds(1)

    let set: RedisSentinelSet
    private let eventLoop: any EventLoop
    private let timeout: TimeAmount
    /// With `rediss-sentinel://`: TLS to the Sentinels too.
    private let tls: NIOSSLContext?
    private let state = Mutex(State())
    /// Told of every primary followed: the address before and after (`nil` before the first).
    let onSwitch: (@Sendable (RedisAddress?, RedisAddress) -> Void)?

    private struct State {
        /// The Sentinels' last answer, and whether it still stands (``invalidate(_:)``).
        var current: RedisAddress?
        var valid = false
        var generation: UInt64 = 0
        var order: [Int] = []
        var asking: EventLoopFuture<RedisAddress>?
        var poll: RepeatedTask?
        /// The connection subscribed to `+switch-master`.
        var watching: (any Channel)?
        var stopped = false
    }

    init(
        set: RedisSentinelSet, eventLoop: any EventLoop, timeout: TimeAmount, tls: NIOSSLContext?,
        onSwitch: (@Sendable (RedisAddress?, RedisAddress) -> Void)?
    ) {
        self.set = set
        self.tls = tls
        self.eventLoop = eventLoop
        self.timeout = timeout
        self.onSwitch = onSwitch
        state.withLock { $0.order = Array(set.addresses.indices) }
        let poll = eventLoop.scheduleRepeatedAsyncTask(initialDelay: Self.pollInterval, delay: Self.pollInterval) { [weak self] _ in
            guard let self else { return eventLoop.makeSucceededVoidFuture() }
            return ask().map { _ in }.recover { _ in }
        }
        state.withLock { $0.poll = poll }
        eventLoop.execute { self.watch(0) }
    }

    /// The Sentinels' last answer, without asking.
    var current: RedisAddress? { state.withLock { $0.current } }

    /// Moves on whenever the primary changes: a pool whose connections were made for an older
    /// one drops them.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// The primary's address: the cached one, else the Sentinels' answer.
    func primary(on caller: any EventLoop) -> EventLoopFuture<(RedisAddress, UInt64)> {
        if let known = state.withLock({ state in state.valid ? state.current.map { ($0, state.generation) } : nil }) {
            return caller.makeSucceededFuture(known)
        }
        return ask().hop(to: caller).map { [self] address in (address, generation) }
    }

    /// The primary at `address` failed a pool (`-READONLY`, a closed connection, no connection):
    /// the next connection asks the Sentinels again.
    func invalidate(_ address: RedisAddress) {
        state.withLock { state in
            if state.current == address { state.valid = false }
        }
    }

    func shutdown() {
        let (poll, watching) = state.withLock { state -> (RepeatedTask?, (any Channel)?) in
            state.stopped = true
            return (state.poll, state.watching)
        }
        poll?.cancel()
        watching?.close(promise: nil)
    }

    // MARK: - +switch-master

    /// Subscribes to a Sentinel's `+switch-master` (the Sentinels in turn, `attempt` counting):
    /// a failover is followed the moment the Sentinel announces it, as Lettuce, go-redis and Jedis
    /// follow it. A subscription lost is made again a second later, and the primary asked anew
    /// (a message may have been missed meanwhile); the poll stands behind it either way.
    private func watch(_ attempt: Int) {
        let order = state.withLock { $0.order }
        guard !state.withLock({ $0.stopped }), !order.isEmpty else { return }
        let sentinel = set.addresses[order[attempt % order.count]]
        RESPConnection.open(to: sentinel, tls: tls, on: eventLoop, timeout: timeout).assumeIsolated().whenComplete { result in
            guard case .success(let (channel, connection)) = result else {
                self.rewatch(attempt + 1)
                return
            }
            let stopped = self.state.withLock { state -> Bool in
                state.watching = channel
                return state.stopped
            }
            guard !stopped else {
                channel.close(promise: nil)
                return
            }
            connection.onPush = { [weak self] value in self?.announced(value) }
            connection.onClose = { [weak self] in self?.rewatch(attempt + 1) }
            _ = connection.logIn(self.set.password)
            connection.send(RESPCommand("SUBSCRIBE", "+switch-master")).assumeIsolated().whenFailure { _ in
                connection.close(RESPError(.closed, "subscription refused"))
            }
        }
    }

    private func rewatch(_ attempt: Int) {
        guard !state.withLock({ $0.stopped }) else { return }
        eventLoop.scheduleTask(in: Self.pollInterval) {
            _ = self.ask()
            self.watch(attempt)
        }
    }

    /// `message`, `+switch-master`, `<name> <old ip> <old port> <new ip> <new port>`.
    private func announced(_ value: RESPValue) {
        guard case .array(let items) = value, items.count == 3, case .bulkString(let kind) = items[0], String(buffer: kind) == "message",
            case .bulkString(let payload) = items[2]
        else { return }
        let words = String(buffer: payload).split(separator: " ")
        guard words.count == 5, words[0] == set.masterName, let port = Int(words[4]), (1...65535).contains(port) else { return }
        found(RedisAddress(host: String(words[3]), port: port), from: nil, promise: nil)
    }

    /// One question to the Sentinels at a time: concurrent callers share it.
    private func ask() -> EventLoopFuture<RedisAddress> {
        let (existing, created, order) = state.withLock { state -> (EventLoopFuture<RedisAddress>?, EventLoopPromise<RedisAddress>?, [Int]) in
            if let asking = state.asking { return (asking, nil, []) }
            let promise = eventLoop.makePromise(of: RedisAddress.self)
            state.asking = promise.futureResult
            return (nil, promise, state.order)
        }
        if let existing { return existing }
        guard let promise = created else { return eventLoop.makeFailedFuture(RESPError(.shutdown, "no question asked")) }
        eventLoop.execute { self.ask(order[...], promise: promise) }
        return promise.futureResult
    }

    /// What the Sentinels asked so far said, when none named the primary.
    private struct Answers {
        /// One monitors no primary of that name.
        var unknown = false
        /// One answered, but as no Sentinel does (`-ERR unknown command`: a Redis server).
        var notSentinel = false
        /// One refused the login: its `requirepass` not given, or another.
        var login: RESPError?
    }

    /// Asks the Sentinels in `remaining` in turn.
    private func ask(_ remaining: ArraySlice<Int>, answers: Answers = Answers(), promise: EventLoopPromise<RedisAddress>) {
        guard let index = remaining.first else {
            state.withLock { $0.asking = nil }
            let all = set.addresses.map(\.description).joined(separator: ", ")
            if answers.unknown {
                promise.fail(RESPError(.unsupported, "no Sentinel of \(all) monitors a primary named \(set.masterName)", command: "SENTINEL"))
            } else if let login = answers.login {
                promise.fail(
                    RESPError(
                        .server,
                        "the Sentinels refused the login (\(login.reply ?? "AUTH")): give their password in replay-store-sentinel-password-file",
                        command: "SENTINEL AUTH", reply: login.reply))
            } else if answers.notSentinel {
                promise.fail(
                    RESPError(.unsupported, "\(all) answered, but not as a Sentinel (SENTINEL is an unknown command there)", command: "SENTINEL"))
            } else {
                promise.fail(RESPError(.connect, "no Sentinel answered (\(all))"))
            }
            return
        }
        let sentinel = set.addresses[index]
        let command = RESPCommand("SENTINEL", "get-master-addr-by-name", set.masterName)
        RESPConnection.oneCommand(command, to: sentinel, tls: tls, password: set.password, on: eventLoop, timeout: timeout).whenComplete { result in
            var answers = answers
            switch result {
            case .success(.array(let items)):
                if items.count == 2, case .bulkString(let host) = items[0], case .bulkString(let port) = items[1],
                    let number = Int(String(buffer: port)), (1...65535).contains(number)
                {
                    self.found(RedisAddress(host: String(buffer: host), port: number), from: index, promise: promise)
                    return
                }
            case .success(.null):
                answers.unknown = true
            case .failure(let error as RESPError) where error.kind == .unsupported:
                answers.notSentinel = true
            case .failure(let error as RESPError) where ["NOAUTH", "WRONGPASS"].contains(error.reply?.uppercased() ?? "") || error.command == "AUTH":
                answers.login = error
            case .success, .failure:
                break
            }
            self.ask(remaining.dropFirst(), answers: answers, promise: promise)
        }
    }

    /// The primary named: by the Sentinel at `index` (asked, answering `promise`), or announced.
    private func found(_ address: RedisAddress, from index: Int?, promise: EventLoopPromise<RedisAddress>?) {
        let switched = state.withLock { state -> (before: RedisAddress?, changed: Bool) in
            if let index {
                state.asking = nil
                state.order.removeAll { $0 == index }
                state.order.insert(index, at: 0)
            }
            let before = state.current
            state.current = address
            state.valid = true
            guard before != address else { return (before, false) }
            state.generation += 1
            return (before, true)
        }
        if switched.changed { onSwitch?(switched.before, address) }
        promise?.succeed(address)
    }
}

extension RESPConnection {
    /// Sends `AUTH password` (a Sentinel's `requirepass`) when there is a password; what follows
    /// on the connection is pipelined behind it.
    func logIn(_ password: String?) -> EventLoopFuture<RESPValue>? {
        password.map { send(RESPCommand("AUTH", $0)) }
    }

    /// Connects to `address` (over TLS with `tls`, as the data nodes), sends `command`, and
    /// closes: a question to a Sentinel, answered within `timeout` or failed.
    static func oneCommand(
        _ command: RESPCommand, to address: RedisAddress, tls: NIOSSLContext?, password: String?, on eventLoop: any EventLoop,
        timeout: TimeAmount
    ) -> EventLoopFuture<RESPValue> {
        open(to: address, tls: tls, on: eventLoop, timeout: timeout).assumeIsolated().flatMap { _, connection in
            let login = connection.logIn(password)
            let reply = connection.send(command)
            // A refused login answers with its own error, not the command's `-NOAUTH`.
            let answer = login.map { $0.assumeIsolated().flatMap { _ in reply }.nonisolated() } ?? reply
            return answer.assumeIsolated().always { _ in connection.close(RESPError(.closed, "one command asked")) }.nonisolated()
        }.nonisolated()
    }

    /// A connection to a Sentinel at `address` (TLS with `tls`: `rediss-sentinel://` trusts an
    /// answer naming the primary no more than the primary itself), its handler ready (connected
    /// within `timeout`).
    static func open(
        to address: RedisAddress, tls: NIOSSLContext?, on eventLoop: any EventLoop, timeout: TimeAmount
    )
        -> EventLoopFuture<(any Channel, RESPConnection)>
    {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try RESPServerIdentity.addTLS(tls, host: address.host, to: pipeline) }
                    try pipeline.addHandler(RESPConnection(eventLoop: channel.eventLoop, commandTimeout: timeout))
                }
            }
            .connect(host: address.host, port: address.port)
            .flatMapThrowing { channel in (channel, try channel.pipeline.syncOperations.handler(type: RESPConnection.self)) }
    }
}
