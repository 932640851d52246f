import Benchmark
import Dispatch
import Foundation
import SAMLVerification
import TestIdP

/// The cost of one signature verification (parse, xmlsec verify, SAML rules), for RSA-2048 and P-256 responses of 3 KB, 8 KB and 64 KB; single-threaded, and the
/// same work spread over every core (throughput of the whole machine); and, as the baseline in
/// the same run, single-threaded with libxml2 canonicalizing (`…/1-thread/libxml2-c14n`).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .cpuTotal],
        timeUnits: .microseconds,
        warmupIterations: 20,
        maxDuration: .seconds(3),
        maxIterations: 100_000,
        thresholds: [.wallClock: .relaxed, .mallocCountTotal: .relaxed]
    )
    let cores = ProcessInfo.processInfo.activeProcessorCount

    for algorithm in [KeyAlgorithm.rsa2048, .p256] {
        let fixtures = VerificationFixture.make(algorithm)
        for (name, document) in fixtures.documents {
            let verifier = fixtures.verifier
            Benchmark("\(algorithm.rawValue)/\(name)/1-thread") { benchmark in
                document.withUnsafeBytes { bytes in
                    for _ in benchmark.scaledIterations {
                        blackHole(try! verifier.verify(bytes, mvpd: VerificationFixture.mvpd))
                    }
                }
            }
            let baseline = fixtures.libxml2Verifier
            Benchmark("\(algorithm.rawValue)/\(name)/1-thread/libxml2-c14n") { benchmark in
                document.withUnsafeBytes { bytes in
                    for _ in benchmark.scaledIterations {
                        blackHole(try! baseline.verify(bytes, mvpd: VerificationFixture.mvpd))
                    }
                }
            }
            // One iteration = `cores` verifications run concurrently, one per core: divide the
            // time by the core count for the per-verification cost at full load.
            Benchmark(
                "\(algorithm.rawValue)/\(name)/\(cores)-threads",
                configuration: .init(scalingFactor: .one)
            ) { benchmark in
                for _ in benchmark.scaledIterations {
                    DispatchQueue.concurrentPerform(iterations: cores) { _ in
                        for _ in 0..<16 {
                            blackHole(try! verifier.verify(document, mvpd: VerificationFixture.mvpd))
                        }
                    }
                }
            }
        }
    }
}
