import Gateway
import GatewayTestSupport
import Testing

/// The trace ids the gateway starts, judged by the samplers downstream that read them: W3C Trace
/// Context Level 2 promises (with the `random` flag) that the right-most 7 bytes are uniform, and
/// OpenTelemetry's `TraceIdRatioBased` sampler compares the low 8 with the ratio. Each rule below
/// is written from those texts, not from the gateway's code.
@Suite("Trace id randomness")
struct TraceIDRandomnessTests {
    /// W3C Trace Context Level 2: keep a trace when its right-most 56 bits, read as an unsigned
    /// integer, are below `ratio` × 2^56.
    static func keptByRightmost56Bits(_ traceID: String, ratio: Double) -> Bool {
        guard let low = UInt64(traceID.suffix(14), radix: 16) else { return false }
        return Double(low) < ratio * 0x1p56
    }

    /// OpenTelemetry's `TraceIdRatioBased`, as its Java SDK decides: the low 8 bytes as a signed
    /// 64-bit integer, kept when its absolute value is below `ratio` × `Long.MAX_VALUE`.
    static func keptByTraceIDRatioBased(_ traceID: String, ratio: Double) -> Bool {
        guard let low = UInt64(traceID.suffix(16), radix: 16) else { return false }
        let bound = UInt64(ratio * Double(Int64.max))
        // `magnitude`: Java's `Math.abs(Long.MIN_VALUE)` stays negative, below any bound; 2^63 here is above.
        return Int64(bitPattern: low).magnitude < bound
    }

    /// 20,000 trace ids, as 20 connections of 1,000 requests make them.
    static func traceIDs() -> [String] {
        (0..<20).flatMap { _ in
            var ids = TraceIDSequence()
            return (0..<1_000).map { _ in ids.nextTraceID() }
        }
    }

    @Test("at ratio 1 %, a Level 2 sampler (right-most 56 bits) keeps about 1 % of 20,000 trace ids")
    func level2Sampler() {
        let kept = Self.traceIDs().filter { Self.keptByRightmost56Bits($0, ratio: 0.01) }.count
        // 200 expected (standard deviation 14); a counter in those bits would have every one kept.
        #expect((120...280).contains(kept), "\(kept) of 20,000 kept")
    }

    @Test("at ratio 1 %, OpenTelemetry's TraceIdRatioBased (low 64 bits) keeps about 1 % of 20,000 trace ids")
    func traceIDRatioBased() {
        let kept = Self.traceIDs().filter { Self.keptByTraceIDRatioBased($0, ratio: 0.01) }.count
        #expect((120...280).contains(kept), "\(kept) of 20,000 kept")
    }

    @Test("every one of the 128 bits is set in about half the ids; ids are 32 lower-case hex digits, distinct, never all zeros")
    func everyBitDrawn() {
        let ids = Self.traceIDs()
        #expect(Set(ids).count == ids.count)
        let lowerHex = Set("0123456789abcdef")
        let allZeros = String(repeating: "0", count: 32)
        #expect(ids.allSatisfy { id in id.count == 32 && id.allSatisfy { lowerHex.contains($0) } && id != allZeros })
        var ones = [Int](repeating: 0, count: 128)
        for id in ids {
            for (index, digit) in id.enumerated() {
                guard let value = Int(String(digit), radix: 16) else { continue }
                for bit in 0..<4 where value & (8 >> bit) != 0 { ones[index * 4 + bit] += 1 }
            }
        }
        // 10,000 expected for each bit (standard deviation 71): beyond 7 of them is a constant or a counter's high bit.
        let skewed = ones.enumerated().filter { !(9_500...10_500).contains($0.element) }
        #expect(skewed.isEmpty, "bits set out of 20,000: \(skewed)")
    }

    @Test("two connections start unrelated trace ids")
    func connectionsDiffer() {
        var first = TraceIDSequence()
        var second = TraceIDSequence()
        let a = (0..<100).map { _ in first.nextTraceID() }
        let b = (0..<100).map { _ in second.nextTraceID() }
        #expect(Set(a).isDisjoint(with: b))
        // Not one connection's random half with a counter after it: no two ids share their first 16 digits.
        #expect(Set(a.map { $0.prefix(16) }).count == 100)
    }

    @Test("span ids are distinct for 200,000 requests of one connection and never zero")
    func spanIDsDistinct() {
        var ids = TraceIDSequence()
        let spanIDs = (0..<200_000).map { _ in ids.nextSpanID() }
        let seen = Set(spanIDs)
        #expect(seen.count == 200_000 && !seen.contains(0))
        // Drawn, not counted: the span ids are spread over the 64 bits.
        #expect(seen.filter { $0 < 1 << 56 }.count < 2_000, "span ids bunched low")
    }

    @Test("the sampler's draw for a new trace, from a connection's sequence, keeps about the ratio")
    func newTraceDraw() {
        let sampler = TraceSampler(ratio: 0.5)
        var ids = TraceIDSequence()
        let kept = (0..<10_000).filter { _ in sampler.recordsNewTrace(using: &ids) }.count
        #expect((4_600...5_400).contains(kept), "\(kept)")
        var more = TraceIDSequence()
        let always = (0..<100).allSatisfy { _ in TraceSampler(ratio: 1).recordsNewTrace(using: &more) }
        let never = (0..<100).contains { _ in TraceSampler(ratio: 0).recordsNewTrace(using: &more) }
        #expect(always && !never)
    }

    @Test("through the gateway: 200 requests without a traceparent reach the backend with random trace ids (flag 02), about 1 % kept at 1 %")
    func throughTheGateway() async throws {
        try await EchoUpstream.withGateway { h, echo, _ in
            for _ in 0..<200 {
                let reply = try await h.send(.GET, "/api/v2/REF/configuration")
                #expect(reply.status == 200)
            }
            let traceparents = echo.requests.flatMap { $0.header("traceparent") }
            #expect(traceparents.count == 200)
            var traceIDs: [String] = []
            for traceparent in traceparents {
                let parts = traceparent.split(separator: "-").map(String.init)
                #expect(parts.count == 4 && parts[3] == "02", "\(traceparent)")
                if parts.count == 4 { traceIDs.append(parts[1]) }
            }
            #expect(Set(traceIDs).count == traceIDs.count)
            let level2 = traceIDs.filter { Self.keptByRightmost56Bits($0, ratio: 0.01) }.count
            let otel = traceIDs.filter { Self.keptByTraceIDRatioBased($0, ratio: 0.01) }.count
            // 2 expected of 200, more than 12 about once in six million runs; a counter had all 200 kept.
            #expect(level2 <= 12 && otel <= 12, "kept \(level2) (Level 2) and \(otel) (TraceIdRatioBased) of 200")
        }
    }
}
