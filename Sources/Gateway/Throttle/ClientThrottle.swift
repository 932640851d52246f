// The limits this process keeps per client: the request throttle (a token bucket per client and
// its `RATE/BURST` setting), the key a client is counted by, and the caps on open connections.

import Dispatch
import NIOCore
import NIOHTTP1
import ServerSupport
import Synchronization

/// A token bucket per client (``ClientKey``), shared by every event loop: a client's
/// connections land on different loops, and one bucket per loop would multiply its allowance.
///
/// Each bucket holds `burst + 1` tokens (the request the rate allows now, plus the burst) and
/// gains `rate` a second; a request takes one or is refused with the wait until the next. The
/// backend documents its throttle as one request a second with an initial burst of ten: over
/// any stretch of time a bucket of eleven refilling at one a second lets through at least as
/// many requests as that, so a client the gateway refuses is one the backend would refuse too.
///
/// The table is split in shards, each behind its own lock, so loops rarely wait on each other.
/// A shard holds at most ``shardCapacity`` clients: past it, the buckets that have refilled
/// completely (the same as no bucket) are dropped, then, if still full — more distinct clients
/// inside one refill time than the table holds — every bucket of the shard, emptied ones too.
/// Memory stays bounded whatever addresses arrive, at the price of a fresh burst for the clients
/// of a shard swept by such a flood; the worker queue's bound and the connection caps still hold
/// then.
package final class ClientThrottle: Sendable {
    package let limit: ThrottleRate
    private let capacity: Double
    private let shards: [Shard]
    package static let shardCount = 16
    package static let shardCapacity = 8192

    struct Bucket {
        var tokens: Double
        /// `DispatchTime` nanoseconds of the last update.
        var updated: UInt64
    }

    /// One lock's share of the clients (a lock is not copyable: each lives in its own object).
    private final class Shard: Sendable {
        let buckets = Mutex<[ClientKey: Bucket]>([:])
    }

    package init(_ limit: ThrottleRate) {
        self.limit = limit
        capacity = Double(limit.burst + 1)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// Takes a token for `client` at `now` (`DispatchTime` nanoseconds; read under the shard's
    /// lock when not given): `nil` when the request may go on, else the seconds until the next
    /// token.
    ///
    /// Time only moves forward for a bucket: loops that read the clock before they get the lock
    /// would otherwise present an earlier time after a later one, and an unsigned difference
    /// that wrapped would fill the bucket — a client on two loops refilling its own.
    package func take(_ client: ClientKey, now given: UInt64? = nil) -> Double? {
        let shard = Int(truncatingIfNeeded: (client.high ^ client.low).multipliedReportingOverflow(by: 0x9E37_79B9_7F4A_7C15).partialValue >> 60)
        let (rate, capacity) = (limit.rate, capacity)
        return shards[shard].buckets.withLock { buckets -> Double? in
            let now = given ?? DispatchTime.now().uptimeNanoseconds
            var bucket = buckets[client] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + Self.seconds(from: bucket.updated, to: now) * rate)
            bucket.updated = max(bucket.updated, now)
            guard bucket.tokens >= 1 else {
                buckets[client] = bucket
                return (1 - bucket.tokens) / rate
            }
            bucket.tokens -= 1
            if buckets[client] == nil && buckets.count >= Self.shardCapacity { Self.sweep(&buckets, now: now, rate: rate, capacity: capacity) }
            buckets[client] = bucket
            return nil
        }
    }

    /// Seconds from `start` to `end`, none when `end` is not later.
    private static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e9 : 0
    }

    /// Drops the buckets that are full again by `now`, or all of them when none is.
    private static func sweep(_ buckets: inout [ClientKey: Bucket], now: UInt64, rate: Double, capacity: Double) {
        buckets = buckets.filter { $0.value.tokens + seconds(from: $0.value.updated, to: now) * rate < capacity }
        if buckets.count >= shardCapacity { buckets = [:] }
    }

    /// Clients with a bucket now (for the tests of the bound).
    package var clientCount: Int { shards.reduce(0) { total, shard in total + shard.buckets.withLock { $0.count } } }
}

// MARK: - The setting

/// A throttle setting: `RATE/BURST` (`1/10`: one request a second, a burst of ten beyond it), or
/// `off`.
package struct ThrottleRate: Sendable, Equatable, CustomStringConvertible {
    /// Tokens a second.
    package let rate: Double
    /// Requests allowed at once beyond the rate.
    package let burst: Int

    /// The backend's own throttle, as it documents it: one request a second per device address,
    /// with an initial burst of ten.
    package static let backend = ThrottleRate(rate: 1, burst: 10)

    package init(rate: Double, burst: Int) {
        self.rate = rate
        self.burst = burst
    }

    /// `RATE/BURST` (rate 0.001…10⁶ requests a second — a token at least every 1000 s — burst
    /// 0…10⁶), or
    /// `off` (`nil`; also `false`, what YAML makes of an unquoted `off`); `nil` with `valid`
    /// false when malformed.
    package static func parse(_ text: String) -> (rate: ThrottleRate?, valid: Bool) {
        if ["off", "false"].contains(text.lowercased()) { return (nil, true) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let rate = Double(parts[0]), rate >= 0.001, rate <= 1_000_000,
            let burst = Int(parts[1]), (0...1_000_000).contains(burst)
        else { return (nil, false) }
        return (ThrottleRate(rate: rate, burst: burst), true)
    }

    package var description: String {
        let rateText = rate == rate.rounded() ? String(Int(rate)) : String(rate)
        return "\(rateText)/\(burst)"
    }
}

// MARK: - Whom a request is counted against

/// Whom a request is counted against by the throttle: the client's address as the backend would
/// key it (its throttle is per device address, from `X-Forwarded-For`), so the gateway's is
/// never keyed more finely than the backend's.
///
/// From a peer in `trusted-proxies`, the last `X-Forwarded-For` address not itself a trusted
/// proxy (the one the outermost trusted proxy saw); from any other peer, the peer. An IPv6
/// client is counted by its /64, the block one subscriber line is given: a client rotating
/// through its own /64 stays one client, and the table cannot be grown 2⁶⁴ ways by one host.
package struct ClientKey: Hashable, Sendable {
    package let high: UInt64
    package let low: UInt64

    /// `nil` for a peer without an IP address (a Unix socket): not throttled.
    init?(peer: SocketAddress?, headers: HTTPHeaders, trusting proxies: TrustedProxies) {
        guard let peer, let bits = AddressBlock.bits(of: peer) else { return nil }
        var client = bits
        if !proxies.isEmpty, proxies.contains(peer) {
            // Right to left: each hop appends the address it saw. The first that is not a
            // trusted proxy is the client; an entry that is no address ends the walk there (a
            // trusted proxy never writes one, so it came from the client), and the last
            // address found stands. So does the address at ``maximumHops``: entries past it are
            // the client's to write (no real chain of proxies is that long), and are not read.
            var hops = 0
            var walking = true
            for value in headers["x-forwarded-for"].reversed() where walking {
                HTTPFieldValue.forEachElement(of: value, reversed: true) { entry in
                    hops += 1
                    guard hops <= Self.maximumHops, entry.utf8.count <= Self.maximumEntryLength, let address = Self.address(String(entry))
                    else {
                        walking = false
                        return false
                    }
                    client = address
                    walking = proxies.contains(high: address.high, low: address.low)
                    return walking
                }
            }
        }
        self.init(high: client.high, low: client.low)
    }

    /// The most `X-Forwarded-For` entries read, from the right.
    static let maximumHops = 32
    /// The longest entry read as an address: a bracketed IPv6 address with a port is 53 bytes.
    static let maximumEntryLength = 64

    /// An `X-Forwarded-For` entry's address, also written with a port as some proxies do
    /// (`203.0.113.7:51234`, `[2001:db8::7]:51234`): the port must not make it another client.
    static func address(_ text: String) -> (high: UInt64, low: UInt64)? {
        if let bits = AddressBlock.bits(text: text) { return bits }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return AddressBlock.bits(text: String(text[text.index(after: text.startIndex)..<close]))
        }
        guard let colon = text.firstIndex(of: ":"), colon == text.lastIndex(of: ":") else { return nil }
        return AddressBlock.bits(text: String(text[..<colon]))
    }

    package init(high: UInt64, low: UInt64) {
        self.high = high
        // IPv4 (mapped: ::ffff:0:0/96) by its address; IPv6 by its /64.
        let mapped = high == 0 && low >> 32 == 0x0000_FFFF
        self.low = mapped ? low : 0
    }
}

// MARK: - Connection caps

/// `max-connections`, `max-connections-per-client` and `max-streams-per-client`: the open client
/// connections, counted at accept and released at close, and the open HTTP/2 streams per client
/// over all its connections. A connection beyond a cap is closed before it is read from, so one
/// address (or a flood of them) cannot hold every file descriptor and event-loop slot; a stream
/// beyond its client's cap is refused before it reaches a backend, so one client cannot fan out
/// to a backend connection per stream on connections it is allowed.
///
/// Per client is per peer address (an IPv6 peer by its /64, as in ``ClientKey``): at accept
/// nothing else is known.
package final class ConnectionCaps: Sendable {
    private let total: Int
    private let perClient: Int
    private let streamsPerClient: Int
    private let state = Mutex(State())

    struct State {
        var open = 0
        var byClient: [ClientKey: Int] = [:]
        var streamsByClient: [ClientKey: Int] = [:]
    }

    /// Why a connection was closed at accept: the `reason` of `samlgate_connections_refused_total`.
    package enum Refusal: String, Sendable, CaseIterable {
        case total
        case perClient = "per_client"
        /// `plain-port`'s own cap (`max-probe-connections`).
        case probes
    }

    /// - Parameters: `0` for no limit.
    package init(total: Int, perClient: Int, streamsPerClient: Int = 0) {
        self.total = total
        self.perClient = perClient
        self.streamsPerClient = streamsPerClient
    }

    /// The key a peer is counted under.
    static func key(of peer: SocketAddress?) -> ClientKey? {
        peer.flatMap(AddressBlock.bits(of:)).map { ClientKey(high: $0.high, low: $0.low) }
    }

    /// Counts a new connection from `peer`, or refuses it (nothing counted).
    func admit(_ peer: SocketAddress?, refusing refusal: Refusal = .total) -> (key: ClientKey?, refusal: Refusal?) {
        let key = Self.key(of: peer)
        let refused = state.withLock { state -> Refusal? in
            if total > 0 && state.open >= total { return refusal }
            if let key, perClient > 0 {
                let count = state.byClient[key, default: 0]
                if count >= perClient { return .perClient }
                state.byClient[key] = count + 1
            }
            state.open += 1
            return nil
        }
        return (key, refused)
    }

    /// A connection ``admit(_:refusing:)`` counted has closed.
    func release(_ key: ClientKey?) {
        state.withLock { state in
            state.open -= 1
            if let key, perClient > 0 {
                let count = (state.byClient[key] ?? 1) - 1
                state.byClient[key] = count > 0 ? count : nil
            }
        }
    }

    /// Counts a new HTTP/2 stream of `key`'s, or refuses it (`false`, nothing counted).
    func admitStream(_ key: ClientKey?) -> Bool {
        guard let key, streamsPerClient > 0 else { return true }
        return state.withLock { state in
            let count = state.streamsByClient[key, default: 0]
            guard count < streamsPerClient else { return false }
            state.streamsByClient[key] = count + 1
            return true
        }
    }

    /// A stream ``admitStream(_:)`` counted has closed.
    func releaseStream(_ key: ClientKey?) {
        guard let key, streamsPerClient > 0 else { return }
        state.withLock { state in
            let count = (state.streamsByClient[key] ?? 1) - 1
            state.streamsByClient[key] = count > 0 ? count : nil
        }
    }

    /// Open connections now.
    var open: Int { state.withLock { $0.open } }
}
