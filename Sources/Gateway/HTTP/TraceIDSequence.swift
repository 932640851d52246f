/// Fresh trace and span ids for one client connection: random bits drawn once per connection,
/// and a counter (as ``RequestIDSequence``: 128 random bits per request would cost a `getrandom`
/// system call each). Never all zeros, which the recommendation reserves as invalid.
struct TraceIDSequence {
    private let traceHigh: UInt64
    private let spanBase: UInt64
    private var counter: UInt64 = 0

    init() {
        traceHigh = UInt64.random(in: 1 ... .max)
        spanBase = UInt64.random(in: .min ... .max)
    }

    /// 32 hex digits: the connection's random half, then the counter.
    mutating func nextTraceID() -> String {
        counter &+= 1
        return Self.hex(traceHigh, counter)
    }

    /// A span id (16 hex digits once written), distinct for each request of the connection.
    mutating func nextSpanID() -> UInt64 {
        counter &+= 1
        let id = spanBase &+ counter
        return id == 0 ? 1 : id
    }

    /// `high` then `low` as 32 lower-case hex digits, written into one string: one allocation
    /// per id, not one per conversion and concatenation.
    static func hex(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(high, into: buffer, at: 0)
            write(low, into: buffer, at: 16)
            return 32
        }
    }

    /// `value` as 16 lower-case hex digits at `offset`.
    static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let digits: StaticString = "0123456789abcdef"
        for index in 0..<16 {
            buffer[offset + index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
        }
    }
}
