import NIOHTTP1

/// W3C Trace Context (`traceparent`, `tracestate`) through the gateway's hop: the client's trace
/// is continued with a span id of the gateway's own as the parent the backend sees, so the
/// backend's trace and the client's join; a request without a usable `traceparent` starts a new
/// trace. Sent upstream on every request, pass-through included; the trace id is in the log
/// lines beside the request id.
///
/// Read strictly, as the recommendation says a participant must: version `00` exactly
/// (`00-<32 hex>-<16 hex>-<2 hex>`, lower-case, ids not all zeros), a later version by that
/// prefix (`ff` is invalid), one `traceparent` header only. Anything else is a new trace, and
/// the client's `tracestate` goes with its broken parent. A `tracestate` is forwarded when it is
/// printable ASCII of at most 512 bytes (its header lines joined with `,`), else dropped. A trace
/// the gateway starts is not marked sampled when tracing is off (it records no spans then);
/// with tracing on, it is marked sampled when the gateway records its span
/// (``traced(_:tracing:sampler:ids:at:)``).
///
/// The flags follow Level 2: the `random` flag (`02`) is set on a trace the gateway starts (its
/// trace ids are drawn whole, ``TraceIDSequence``), and on a continued trace
/// it is the client's, set or unset, as the recommendation requires of every outgoing
/// `traceparent` with the client's trace id. Flags the recommendation does not define are
/// reserved, and sent as zeros.
struct TraceContext {
    /// 32 lower-case hex digits.
    let traceID: String
    /// The gateway's span: the parent id the backend gets.
    let spanID: UInt64
    /// Two hex digits: `00` to `03` (sampled `01`, random `02`); the client's, less the flags not
    /// defined, on a continued trace; `02` for a trace the gateway starts (`03` when its span is sampled).
    let flags: String
    /// The client's `tracestate`, forwarded as it came.
    let state: String?

    /// The `traceparent` the backend gets, written in one piece (one allocation per request).
    var traceparent: String {
        String(unsafeUninitializedCapacity: 55) { buffer in
            var index = 0
            func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
                for byte in bytes {
                    buffer[index] = byte
                    index += 1
                }
            }
            append("00-".utf8)
            append(traceID.utf8)
            append(CollectionOfOne(UInt8(ascii: "-")))
            RequestID.write(spanID, into: buffer, at: index)
            index += 16
            append(CollectionOfOne(UInt8(ascii: "-")))
            append(flags.utf8)
            return index
        }
    }

    static let maximumStateLength = 512

    /// The flags of a trace the gateway starts unsampled: its trace ids are random (``TraceIDSequence``).
    static let startedFlags = "02"

    /// `sampled` (`01`) and `random` (`02`), the flags the recommendation defines, as they are sent.
    static func flags(sampled: Bool, random: Bool) -> String {
        switch (sampled, random) {
        case (false, false): "00"
        case (true, false): "01"
        case (false, true): "02"
        case (true, true): "03"
        }
    }

    /// Whether `flags` (two hex digits) carry the `random` flag.
    static func isRandom(_ flags: String) -> Bool {
        guard let value = UInt8(flags, radix: 16) else { return false }
        return value & 0x02 != 0
    }

    /// Whether `flags` (two hex digits) carry the `sampled` flag.
    static func isSampled(_ flags: String) -> Bool {
        guard let value = UInt8(flags, radix: 16) else { return false }
        return value & 0x01 != 0
    }

    /// The context of a request with these headers; `ids` makes the gateway's span id (and a
    /// new trace id when the client sent no usable one).
    static func make(_ headers: HTTPHeaders, ids: inout TraceIDSequence) -> TraceContext {
        let parents = headers["traceparent"]
        guard parents.count == 1, let (traceID, flags) = parse(parents[0]) else {
            return TraceContext(traceID: ids.nextTraceID(), spanID: ids.nextSpanID(), flags: startedFlags, state: nil)
        }
        return TraceContext(traceID: traceID, spanID: ids.nextSpanID(), flags: flags, state: state(headers["tracestate"]))
    }

    /// The context of a request when tracing is on. `sampler` decides first whether it is
    /// recorded, then the ids are drawn as ``make(_:ids:)`` draws them (the same rules for the
    /// client's `traceparent`) and marked sampled or not; only a recorded request gets a span,
    /// which `tracing` starts with exactly those ids.
    static func traced(
        _ headers: HTTPHeaders, tracing: any RequestTracing, sampler: TraceSampler, ids: inout TraceIDSequence, at uptime: UInt64
    ) -> (TraceContext, (any RequestSpan)?) {
        let parents = headers["traceparent"]
        let parent = parents.count == 1 ? continued(parents[0]) : nil
        let context: TraceContext
        if let parent {
            let recorded = sampler.records(continuing: parent.traceID)
            let flags = Self.flags(sampled: recorded, random: isRandom(parent.flags))
            context = TraceContext(traceID: parent.traceID, spanID: ids.nextSpanID(), flags: flags, state: state(headers["tracestate"]))
        } else {
            let recorded = sampler.recordsNewTrace(using: &ids)
            context = TraceContext(traceID: ids.nextTraceID(), spanID: ids.nextSpanID(), flags: flags(sampled: recorded, random: true), state: nil)
        }
        guard isSampled(context.flags) else { return (context, nil) }
        let span = tracing.startRequest(
            traceID: context.traceID, spanID: context.spanID, parentSpanID: parent?.spanID, state: context.state, at: uptime)
        return (context, span)
    }

    /// A valid `traceparent` (a later version read for the fields version 00 defines, as the
    /// recommendation says): its trace id, its span id (the client's span) and its flags; else `nil`.
    static func continued(_ value: String) -> (traceID: String, spanID: UInt64, flags: String)? {
        var value = value
        return value.withUTF8 { bytes in
            guard let (traceID, flags) = parse(bytes: bytes),
                let spanID = UInt64(String(decoding: bytes[36..<52], as: UTF8.self), radix: 16)
            else { return nil }
            return (traceID, spanID, flags)
        }
    }

    /// The trace id and flags (those defined, ``flags(sampled:random:)``) of a valid `traceparent`, else `nil`.
    static func parse(_ value: String) -> (traceID: String, flags: String)? {
        var value = value
        // In place (header values are native strings): no copy of the bytes.
        return value.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> (traceID: String, flags: String)? {
        // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
            bytes[0..<2].allSatisfy(isLowerHex), !(bytes[0] == UInt8(ascii: "f") && bytes[1] == UInt8(ascii: "f")),
            bytes[3..<35].allSatisfy(isLowerHex), bytes[36..<52].allSatisfy(isLowerHex), bytes[53..<55].allSatisfy(isLowerHex),
            !bytes[3..<35].allSatisfy({ $0 == UInt8(ascii: "0") }), !bytes[36..<52].allSatisfy({ $0 == UInt8(ascii: "0") })
        else { return nil }
        let version00 = bytes[0] == UInt8(ascii: "0") && bytes[1] == UInt8(ascii: "0")
        // Version 00 is exactly 55 bytes; a later version may carry more after a "-".
        guard version00 ? bytes.count == 55 : (bytes.count == 55 || bytes[55] == UInt8(ascii: "-")) else { return nil }
        // The defined flags are the two lowest bits, all in the second hex digit; the rest are
        // reserved and sent as zeros.
        let low = bytes[54] <= UInt8(ascii: "9") ? bytes[54] - UInt8(ascii: "0") : bytes[54] - UInt8(ascii: "a") + 10
        return (String(decoding: bytes[3..<35], as: UTF8.self), flags(sampled: low & 0x01 != 0, random: low & 0x02 != 0))
    }

    /// The `tracestate` lines joined, when printable ASCII within the length limit.
    static func state(_ values: [String]) -> String? {
        // The length is known before anything is joined: a long value costs nothing more.
        guard !values.isEmpty, values.reduce(values.count - 1, { $0 + $1.utf8.count }) <= maximumStateLength else { return nil }
        let joined = values.joined(separator: ",")
        guard joined.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return joined
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

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
        self.init(seededBy: &system)
    }

    /// Seeded from `source`: the system's once per connection, or an HTTP/2 connection's own
    /// sequence for each of its streams (a stream's ids are as unpredictable as the connection's).
    package init(seededBy source: inout some RandomNumberGenerator) {
        var seed: (UInt64, UInt64, UInt64, UInt64) = (source.next(), source.next(), source.next(), source.next())
        while seed.0 | seed.1 | seed.2 | seed.3 == 0 { seed = (source.next(), source.next(), source.next(), source.next()) }
        state = seed
        // From the seeded generator, not the source: one draw fewer.
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
