import Benchmark
import NIOCore
import SAMLEncoding

/// The cost of one cookbook encoding, for the fused fast path and for the cookbook's Foundation
/// code, at the sizes a gateway sees (3 KB, 8 KB, 64 KB) and an extreme (1 MB).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000,
        // Time is noisy on a shared 2-core machine; allocation counts are exact.
        thresholds: [.wallClock: .relaxed, .mallocCountTotal: .strict]
    )

    for (name, size) in SAMLFixture.sizes {
        let text = SAMLFixture.response(bytes: size)
        let bytes = Array(text.utf8)
        registerStageBenchmarks(name: name, bytes: bytes)

        // The fused path into a reused buffer: the gateway's steady state (zero allocations).
        Benchmark("fused/\(name)") { benchmark in
            var output = ByteBufferAllocator().buffer(capacity: CookbookEncoder.requiredCapacity(forInputCount: bytes.count))
            benchmark.startMeasurement()
            bytes.withUnsafeBytes { input in
                for _ in benchmark.scaledIterations {
                    output.clear()
                    try! CookbookEncoder.encode(input, into: &output)
                    blackHole(output.readableBytes)
                }
            }
        }

        // The fused path into a fresh buffer each call: one allocation, the output.
        Benchmark("fused-fresh-buffer/\(name)") { benchmark in
            bytes.withUnsafeBytes { input in
                for _ in benchmark.scaledIterations {
                    var output = ByteBuffer()
                    try! CookbookEncoder.encode(input, into: &output)
                    blackHole(output)
                }
            }
        }

        // An already-encoded value brought to the cookbook form (detect, decode, re-encode).
        let encodedValue: [UInt8] = {
            var out = ByteBuffer()
            bytes.withUnsafeBytes { try! CookbookEncoder.encode($0, into: &out) }
            return Array(out.readableBytesView)
        }()
        Benchmark("any-form-encoded/\(name)") { benchmark in
            var output = ByteBufferAllocator().buffer(capacity: CookbookEncoder.requiredCapacity(forAnyFormCount: encodedValue.count))
            benchmark.startMeasurement()
            encodedValue.withUnsafeBytes { input in
                for _ in benchmark.scaledIterations {
                    output.clear()
                    blackHole(try! CookbookEncoder.encodeAnyForm(input, into: &output))
                }
            }
        }

        // The cookbook's Foundation code: the baseline.
        Benchmark(
            "cookbook-reference/\(name)",
            configuration: .init(maxDuration: .seconds(2), maxIterations: size >= 1_000_000 ? 20 : 2_000)
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(CookbookReference.encode(text))
            }
        }
    }
}
