/// Fresh trace and span ids for one client connection, from a fast generator seeded once per
/// connection from the system's: drawing from the system per request would cost a `getrandom`
/// system call each.
///
/// Every bit of a trace id is drawn (xoshiro256**), so the right-most 7 bytes a W3C Trace Context
/// Level 2 sampler reads (or the low 8 an OpenTelemetry `TraceIdRatioBased` one reads) are uniform,
/// and the trace ids the gateway starts carry the `random` trace flag. Span ids come from a
/// SplitMix64 sequence: a bijection of a counter, so no two requests of a connection share one.
///
/// Neither generator is cryptographic: the ids are unpredictable only as far as the seed is (256
/// bits from the system per connection). Enough ids of one connection reveal its state, and with it
/// that connection's later ids; nothing of another connection's. Ids only have to be unique and
/// uniform, and carry nothing about the request.
package struct TraceIDSequence: RandomNumberGenerator {
    /// xoshiro256**'s state; never all zeros (the one state it cannot leave).
    private var state: (UInt64, UInt64, UInt64, UInt64)
    /// SplitMix64's state: the span ids' counter, started at a random point.
    private var spanState: UInt64

    package init() {
        var system = SystemRandomNumberGenerator()
        var seed: (UInt64, UInt64, UInt64, UInt64) = (system.next(), system.next(), system.next(), system.next())
        while seed.0 | seed.1 | seed.2 | seed.3 == 0 { seed = (system.next(), system.next(), system.next(), system.next()) }
        state = seed
        // From the seeded generator, not the system: one system draw fewer per connection.
        spanState = 0
        spanState = next()
    }

    /// The next 64 bits of xoshiro256**. A `RandomNumberGenerator`, so that the sampler's draw
    /// for a trace the gateway starts costs no system call either.
    package mutating func next() -> UInt64 {
        let result = Self.rotate(state.1 &* 5, by: 7) &* 9
        let shifted = state.1 &<< 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = Self.rotate(state.3, by: 45)
        return result
    }

    /// 32 hex digits, all 128 bits drawn; never all zeros, which the recommendation reserves as invalid.
    package mutating func nextTraceID() -> String {
        var (high, low): (UInt64, UInt64) = (next(), next())
        while high | low == 0 { (high, low) = (next(), next()) }
        return RequestID.hex(high, low)
    }

    /// A span id (16 hex digits once written), distinct for each request of the connection and never zero.
    package mutating func nextSpanID() -> UInt64 {
        // SplitMix64: a Weyl sequence (odd step: every value once in 2^64 steps) through a mix of
        // xor-shifts and odd multipliers, each invertible, so distinct steps give distinct ids.
        spanState &+= 0x9E37_79B9_7F4A_7C15
        var mixed = spanState
        mixed = (mixed ^ (mixed &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed &>> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed &>> 31
        // Zero (one step in 2^64) is the invalid span id: the next step's instead.
        return mixed != 0 ? mixed : nextSpanID()
    }

    private static func rotate(_ value: UInt64, by count: UInt64) -> UInt64 {
        (value &<< count) | (value &>> (64 - count))
    }
}
