import Benchmark
import SAMLEncoding

/// The fused path's stages on their own, so a regression can be pinned to one loop.
func registerStageBenchmarks(name: String, bytes: [UInt8]) {
    Benchmark("stage-validate-utf8/\(name)") { benchmark in
        bytes.withUnsafeBytes { input in
            for _ in benchmark.scaledIterations {
                blackHole(UTF8Validator.firstInvalidOffset(in: input))
            }
        }
    }
    Benchmark("stage-normalize/\(name)") { benchmark in
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { output.deallocate() }
        bytes.withUnsafeBytes { input in
            for _ in benchmark.scaledIterations {
                blackHole(WhitespaceNormalizer.normalize(input, into: output))
            }
        }
    }
    Benchmark("stage-base64/\(name)") { benchmark in
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Base64.encodedCount(bytes.count), alignment: 8)
        defer { output.deallocate() }
        bytes.withUnsafeBytes { input in
            for _ in benchmark.scaledIterations {
                blackHole(Base64.encode(input, into: output))
            }
        }
    }
}
