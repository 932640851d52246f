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
        return RequestID.hex(traceHigh, counter)
    }

    /// A span id (16 hex digits once written), distinct for each request of the connection.
    mutating func nextSpanID() -> UInt64 {
        counter &+= 1
        let id = spanBase &+ counter
        return id == 0 ? 1 : id
    }
}
