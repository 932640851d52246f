import NIOCore
import NIOSSL
import Synchronization

/// Redis Cluster's hash slots: which of the 16,384 slots a key lives in (CRC16-XMODEM of the
/// key, or of its hash tag — the part between the first `{` and the next `}`, when not empty —
/// modulo 16,384), and which key a command the gateway sends touches.
package enum RESPHashSlot {
    package static let count = 16_384

    package static func of(_ key: ByteBuffer) -> Int {
        key.withUnsafeReadableBytes { bytes -> Int in
            var part = bytes[...]
            if let open = part.firstIndex(of: UInt8(ascii: "{")),
                let close = part[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
            {
                part = part[(open + 1)..<close]
            }
            return Int(crc16(part) % UInt16(count))
        }
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis Cluster's.
    static func crc16(_ bytes: Slice<UnsafeRawBufferPointer>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    /// The key `command` touches: `SET key …`'s, `EVALSHA sha numkeys key …`'s (the first key:
    /// the gateway's scripts take one); `nil` for a command without a key.
    static func key(of command: RESPCommand) -> ByteBuffer? {
        let arguments = command.arguments
        switch String(buffer: arguments[0]).uppercased() {
        case "SET", "GET", "DEL", "EXISTS", "PEXPIRE", "TTL", "PTTL":
            return arguments.count >= 2 ? arguments[1] : nil
        case "EVALSHA", "EVAL":
            return arguments.count >= 4 && String(buffer: arguments[2]) != "0" ? arguments[3] : nil
        default:
            return nil
        }
    }
}

/// Which primary serves each hash slot of a Redis Cluster, as the cluster last said
/// (`CLUSTER SLOTS`, Redis 3 to 7): asked of any node the client knows (the URL's seeds first),
/// cached, and refreshed — never per command — when a node answers `-MOVED` (the slot is taken
/// at its word at once, and the whole map asked again), when a node cannot be reached, and every
/// ``refreshInterval`` (a failover elsewhere in the cluster). Shared by every event loop's pools.
final class RESPClusterMap: Sendable {
    static let refreshInterval: TimeAmount = .seconds(5)

    private let seeds: [RedisAddress]
    private let state = Mutex(State())

    private struct State {
        var owners = [RedisAddress?](repeating: nil, count: RESPHashSlot.count)
        var primaries: [RedisAddress] = []
        var refreshing = false
        var refreshedAt: NIODeadline?
        var refreshes = 0
        /// Told when the question under way ends: whether it brought a map.
        var waiting: [EventLoopPromise<Bool>] = []
    }

    /// Told of each map answered.
    private let onRefresh: @Sendable () -> Void

    init(seeds: [RedisAddress], onRefresh: @escaping @Sendable () -> Void) {
        self.seeds = seeds
        self.onRefresh = onRefresh
    }

    /// The primary serving `slot`, if the map knows one.
    func owner(of slot: Int) -> RedisAddress? {
        state.withLock { $0.owners[slot] }
    }

    /// Every primary the map knows (for a command every node must see, `SCRIPT LOAD`); the seeds
    /// before the first answer.
    var primaries: [RedisAddress] {
        state.withLock { $0.primaries.isEmpty ? seeds : $0.primaries }
    }

    /// Maps answered so far.
    var refreshes: Int { state.withLock { $0.refreshes } }

    /// The primaries the last map names (0 before the first).
    var primaryCount: Int { state.withLock { $0.primaries.count } }

    /// Slots no primary serves in the last answer (0 once the cluster covers them all).
    var uncovered: Int { state.withLock { $0.owners.reduce(0) { $0 + ($1 == nil ? 1 : 0) } } }

    /// A node said `-MOVED`: the slot is served there from now on.
    func moved(_ slot: Int, to address: RedisAddress) {
        state.withLock { $0.owners[slot] = address }
    }

    /// Whether the map is due for a refresh (never asked, or older than ``refreshInterval``).
    func isStale(now: NIODeadline) -> Bool {
        state.withLock { state in state.refreshedAt.map { now - $0 >= Self.refreshInterval } ?? true }
    }

    /// Asks the cluster for its map, or joins the question under way: `ask` sends one command to
    /// one address and answers its reply. The nodes known are tried in turn, seeds last. The
    /// future says, once the question ends, whether it brought a map.
    @discardableResult
    func refresh(
        on eventLoop: any EventLoop, ask: @escaping @Sendable (RESPCommand, RedisAddress) -> EventLoopFuture<RESPValue>
    ) -> EventLoopFuture<Bool> {
        let answered = eventLoop.makePromise(of: Bool.self)
        let candidates = state.withLock { state -> [RedisAddress]? in
            state.waiting.append(answered)
            guard !state.refreshing else { return nil }
            state.refreshing = true
            var seen = Set<RedisAddress>()
            return (state.primaries + seeds).filter { seen.insert($0).inserted }
        }
        if let candidates { refresh(candidates[...], on: eventLoop, ask: ask) }
        return answered.futureResult
    }

    private func refresh(
        _ remaining: ArraySlice<RedisAddress>, on eventLoop: any EventLoop,
        ask: @escaping @Sendable (RESPCommand, RedisAddress) -> EventLoopFuture<RESPValue>
    ) {
        guard let node = remaining.first else {
            let waiting = state.withLock { state in
                state.refreshing = false
                defer { state.waiting = [] }
                return state.waiting
            }
            for promise in waiting { promise.succeed(false) }
            return
        }
        ask(RESPCommand("CLUSTER", "SLOTS"), node).whenComplete { result in
            guard case .success(let reply) = result, let owners = Self.owners(reply) else {
                self.refresh(remaining.dropFirst(), on: eventLoop, ask: ask)
                return
            }
            let now = NIODeadline.now()
            let waiting = self.state.withLock { state in
                state.owners = owners
                var seen = Set<RedisAddress>()
                state.primaries = owners.compactMap { $0 }.filter { seen.insert($0).inserted }
                state.refreshing = false
                state.refreshedAt = now
                state.refreshes += 1
                defer { state.waiting = [] }
                return state.waiting
            }
            self.onRefresh()
            for promise in waiting { promise.succeed(true) }
        }
    }

    /// `CLUSTER SLOTS`: `[[start, end, [host, port, id…], replicas…], …]`.
    static func owners(_ reply: RESPValue) -> [RedisAddress?]? {
        guard case .array(let ranges) = reply else { return nil }
        var owners = [RedisAddress?](repeating: nil, count: RESPHashSlot.count)
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3, case .integer(let start) = fields[0], case .integer(let end) = fields[1],
                case .array(let primary) = fields[2], primary.count >= 2, case .bulkString(let host) = primary[0],
                case .integer(let port) = primary[1], 0 <= start, start <= end, end < RESPHashSlot.count, (1...65535).contains(port)
            else { return nil }
            let address = RedisAddress(host: String(buffer: host), port: Int(port))
            for slot in Int(start)...Int(end) {
                // Ranges that overlap are no cluster's answer (and would cost a write per slot each time).
                guard owners[slot] == nil else { return nil }
                owners[slot] = address
            }
        }
        return owners
    }
}

/// A Redis Cluster's commands routed by hash slot: each to the primary serving its key's slot
/// (``RESPClusterMap``), through a pool of that node's own on the caller's event loop (pools made
/// as nodes are met, logged in with the URL's credentials). `-MOVED` updates the map and resends
/// to the node named; `-ASK` (a slot being migrated) resends once there, after `ASKING` on the
/// same connection; at most ``maximumRedirects`` per command. A command without a key goes to
/// a primary; `SCRIPT LOAD` to every primary (a script must be known wherever its keys are), and
/// the scripts loaded are remembered: a node answering `-NOSCRIPT` (a primary new since, or
/// restarted) is given them, pipelined before the command is sent there again.
final class RESPClusterRouting: Sendable {
    static let maximumRedirects = 5
    /// Nodes a client keeps pools for on each loop (a cluster's primaries are rarely more than a few dozen).
    static let maximumNodes = 64

    private let url: RedisURL
    private let tls: NIOSSLContext?
    private let connectionsPerLoop: Int
    private let connectTimeout: TimeAmount
    private let commandTimeout: TimeAmount
    private let health: RESPHealth
    private let events: RESPTopologyEvents
    private let enabled = Atomic<Bool>(false)
    /// The scripts loaded (`SCRIPT LOAD`'s bodies), for a node that does not know them.
    private let scripts = Mutex<[ByteBuffer]>([])
    let map: RESPClusterMap
    /// Per event loop, its pools by node; each box used only on its loop.
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<[RedisAddress: RESPConnectionPool]>]

    init(
        url: RedisURL, tls: NIOSSLContext?, connectionsPerLoop: Int, connectTimeout: TimeAmount, commandTimeout: TimeAmount,
        health: RESPHealth, eventLoops: [any EventLoop], events: RESPTopologyEvents
    ) {
        self.url = url
        self.tls = tls
        self.connectionsPerLoop = connectionsPerLoop
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.health = health
        self.events = events
        map = RESPClusterMap(seeds: url.seeds, onRefresh: events.mapRefreshed)
        var pools: [ObjectIdentifier: NIOLoopBoundBox<[RedisAddress: RESPConnectionPool]>] = [:]
        for eventLoop in eventLoops { pools[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue([:], eventLoop: eventLoop) }
        self.pools = pools
    }

    var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// Keeps a script `command` loads (whatever the routing: a node met later needs it too).
    func remember(_ command: RESPCommand) {
        let arguments = command.arguments
        guard arguments.count == 3, String(buffer: arguments[0]).uppercased() == "SCRIPT", String(buffer: arguments[1]).uppercased() == "LOAD"
        else { return }
        scripts.withLock { known in if !known.contains(arguments[2]) { known.append(arguments[2]) } }
    }

    func enable(on eventLoop: any EventLoop) {
        if !enabled.exchange(true, ordering: .relaxed) { refresh(on: eventLoop) }
    }

    /// Enables routing and waits for the first map (at most three questions, each over every
    /// node known): the slots it leaves unserved, or `nil` when no node answered one.
    func enableAndMap(on eventLoop: any EventLoop) async -> Int? {
        enabled.store(true, ordering: .relaxed)
        for _ in 0..<3 {
            let answered = try? await eventLoop.flatSubmit { self.refresh(on: eventLoop) }.get()
            if answered == true { return map.uncovered }
        }
        return nil
    }

    /// Sends `command` to the node serving its key. Call on `eventLoop`.
    func send(_ command: RESPCommand, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        if map.isStale(now: .now()) { refresh(on: eventLoop) }
        if String(buffer: command.arguments[0]).uppercased() == "SCRIPT" {
            // Every primary must know the script: the first reply answers, all are sent.
            let replies = map.primaries.map { send(command, to: $0, on: eventLoop) }
            return EventLoopFuture.whenAllComplete(replies, on: eventLoop).flatMapThrowing { results in
                for case .success(let reply) in results { return reply }
                if case .failure(let error)? = results.first { throw error }
                throw RESPError(.connect, "no cluster node known")
            }
        }
        return route(command, to: node(for: command), on: eventLoop, hops: 0, asking: false)
    }

    /// Resends `command` where `redirect` says.
    func follow(
        _ redirect: RESPError.RESPRedirect, _ command: RESPCommand, on eventLoop: any EventLoop, hops: Int
    )
        -> EventLoopFuture<RESPValue>
    {
        events.redirected(redirect.ask)
        if !redirect.ask {
            map.moved(redirect.slot, to: redirect.address)
            refresh(on: eventLoop)
        }
        return route(command, to: redirect.address, on: eventLoop, hops: hops, asking: redirect.ask)
    }

    private func route(
        _ command: RESPCommand, to node: RedisAddress, on eventLoop: any EventLoop, hops: Int, asking: Bool
    )
        -> EventLoopFuture<RESPValue>
    {
        guard let pool = pool(node, on: eventLoop) else { return eventLoop.makeFailedFuture(Self.tooManyNodes) }
        let reply = asking ? pool.send([RESPCommand("ASKING"), command]) : pool.send(command)
        return reply.assumeIsolated().flatMapError { error in
            guard let error = error as? RESPError else { return eventLoop.makeFailedFuture(error) }
            if let redirect = error.redirect, hops < Self.maximumRedirects {
                return self.follow(redirect, command, on: eventLoop, hops: hops + 1)
            }
            let scripts = self.scripts.withLock { $0 }
            if error.reply?.uppercased() == "NOSCRIPT", !scripts.isEmpty, hops < Self.maximumRedirects {
                // The node has not seen the scripts: given them, then the command once more.
                let loads = scripts.map { RESPCommand([ByteBuffer(string: "SCRIPT"), ByteBuffer(string: "LOAD"), $0]) }
                return pool.send(loads + (asking ? [RESPCommand("ASKING")] : []) + [command])
            }
            // A node gone (a failover in progress): the map is asked again for the next command.
            if [.connect, .closed, .timeout, .backoff, .cluster].contains(error.kind) { self.refresh(on: eventLoop) }
            return eventLoop.makeFailedFuture(error)
        }.nonisolated()
    }

    private func node(for command: RESPCommand) -> RedisAddress {
        if let key = RESPHashSlot.key(of: command), let owner = map.owner(of: RESPHashSlot.of(key)) { return owner }
        return map.primaries.first ?? url.seeds[0]
    }

    /// `command` to `node` alone, on `eventLoop`'s pool for it.
    private func send(_ command: RESPCommand, to node: RedisAddress, on eventLoop: any EventLoop) -> EventLoopFuture<RESPValue> {
        pool(node, on: eventLoop)?.send(command) ?? eventLoop.makeFailedFuture(Self.tooManyNodes)
    }

    static let tooManyNodes = RESPError(.cluster, "more than \(maximumNodes) cluster nodes named: a redirect or a slot map out of bounds")

    /// `eventLoop`'s pool for `node`, made at first use; `nil` when ``maximumNodes`` pools exist
    /// and none is for a node the map still names (redirects and maps name the addresses, so
    /// whoever answers as a node must not make the gateway hold a pool per name). Call on
    /// `eventLoop`.
    private func pool(_ node: RedisAddress, on eventLoop: any EventLoop) -> RESPConnectionPool? {
        let box = pools[ObjectIdentifier(eventLoop)]!
        if let pool = box.value[node] { return pool }
        if box.value.count >= Self.maximumNodes {
            let named = Set(map.primaries)
            for (address, pool) in box.value where !named.contains(address) {
                pool.closeAll()
                box.value[address] = nil
            }
            guard box.value.count < Self.maximumNodes else { return nil }
        }
        var nodeURL = url
        nodeURL.host = node.host
        nodeURL.port = node.port
        nodeURL.seedList = nil
        let pool = RESPConnectionPool(
            eventLoop: eventLoop, url: nodeURL, tls: tls, size: connectionsPerLoop, connectTimeout: connectTimeout,
            commandTimeout: commandTimeout, health: health)
        box.value[node] = pool
        return pool
    }

    @discardableResult
    private func refresh(on eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        map.refresh(on: eventLoop) { command, node in
            eventLoop.inEventLoop
                ? self.send(command, to: node, on: eventLoop)
                : eventLoop.flatSubmit { self.send(command, to: node, on: eventLoop) }
        }
    }

    func shutdown() async {
        for box in pools.values {
            try? await box.eventLoop.submit { for pool in box.value.values { pool.closeAll() } }.get()
        }
    }
}
