import Dispatch
import NIOConcurrencyHelpers

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
/// inside one refill time than the table holds — every bucket of the shard. Memory stays bounded
/// whatever addresses arrive, at the price of a fresh burst for clients swept away by such a
/// flood; the worker queue's bound and the connection caps still hold then.
package final class ClientThrottle: Sendable {
    package let limit: ThrottleRate
    private let capacity: Double
    private let shards: [NIOLockedValueBox<[ClientKey: Bucket]>]
    package static let shardCount = 16
    package static let shardCapacity = 8192

    struct Bucket {
        var tokens: Double
        /// `DispatchTime` nanoseconds of the last update.
        var updated: UInt64
    }

    package init(_ limit: ThrottleRate) {
        self.limit = limit
        capacity = Double(limit.burst + 1)
        shards = (0..<Self.shardCount).map { _ in NIOLockedValueBox([:]) }
    }

    /// Takes a token for `client` at `now` (`DispatchTime` nanoseconds): `nil` when the request
    /// may go on, else the seconds until the next token.
    package func take(_ client: ClientKey, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double? {
        let shard = Int(truncatingIfNeeded: (client.high ^ client.low).multipliedReportingOverflow(by: 0x9E37_79B9_7F4A_7C15).partialValue >> 60)
        let (rate, capacity) = (limit.rate, capacity)
        return shards[shard].withLockedValue { buckets -> Double? in
            var bucket = buckets[client] ?? Bucket(tokens: capacity, updated: now)
            let elapsed = Double(now &- bucket.updated) / 1e9
            bucket.tokens = min(capacity, bucket.tokens + max(0, elapsed) * rate)
            bucket.updated = now
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

    /// Drops the buckets that are full again by `now`, or all of them when none is.
    private static func sweep(_ buckets: inout [ClientKey: Bucket], now: UInt64, rate: Double, capacity: Double) {
        buckets = buckets.filter { $0.value.tokens + Double(now &- $0.value.updated) / 1e9 * rate < capacity }
        if buckets.count >= shardCapacity { buckets = [:] }
    }

    /// Clients with a bucket now (for the tests of the bound).
    package var clientCount: Int { shards.reduce(0) { total, shard in total + shard.withLockedValue { $0.count } } }
}
