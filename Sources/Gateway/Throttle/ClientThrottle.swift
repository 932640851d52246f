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
/// inside one refill time than the table holds — every bucket of the shard, emptied ones too.
/// Memory stays bounded whatever addresses arrive, at the price of a fresh burst for the clients
/// of a shard swept by such a flood; the worker queue's bound and the connection caps still hold
/// then.
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
        return shards[shard].withLockedValue { buckets -> Double? in
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
    package var clientCount: Int { shards.reduce(0) { total, shard in total + shard.withLockedValue { $0.count } } }
}
