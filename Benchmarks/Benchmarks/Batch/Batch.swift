import Benchmark
import Foundation
@_spi(Benchmarks) import SAMLBatch
import SAMLVerification

/// Whole batch runs over the 10,000-record corpus (one iteration = one run of 10,000 records,
/// so records/s = 10,000 × throughput): raw files and JSON Lines, encode only and encode +
/// verify on every core, against single-threaded verification of the same records (the
/// baseline the issue names) in the same run. Output records are formatted but not written
/// (`BatchOutput.discard`), so the disk does not blur the pipeline's own cost.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .cpuTotal, .peakMemoryResident],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(20),
        maxIterations: 20,
        thresholds: [.wallClock: .relaxed]
    )
    let corpus = BatchCorpus.make()
    let cores = ProcessInfo.processInfo.activeProcessorCount

    func options(verify: Bool) -> BatchOptions {
        var options = BatchOptions()
        options.output = .discard
        options.progress = .none
        options.jobs = cores
        options.reportLimit = 0
        if verify {
            options.verification = BatchVerification(verifier: corpus.verifier, mvpd: BatchCorpus.mvpd)
        }
        return options
    }

    func run(_ input: String, verify: Bool) {
        let report = BatchRunner.run(inputs: [input], options: options(verify: verify)) { _ in }
        precondition(report.statistics.records == BatchCorpus.records && report.statistics.failed == 0, "the corpus must come out clean")
        blackHole(report)
    }

    Benchmark("raw-files/encode/10k-8KB") { benchmark in
        for _ in benchmark.scaledIterations { run(corpus.rawDirectory, verify: false) }
    }
    Benchmark("jsonl/encode/10k-8KB") { benchmark in
        for _ in benchmark.scaledIterations { run(corpus.jsonLines, verify: false) }
    }
    Benchmark("raw-files/encode+verify/10k-8KB") { benchmark in
        for _ in benchmark.scaledIterations { run(corpus.rawDirectory, verify: true) }
    }
    Benchmark("jsonl/encode+verify/10k-8KB") { benchmark in
        for _ in benchmark.scaledIterations { run(corpus.jsonLines, verify: true) }
    }
    // The baseline: the same 10,000 verifications (same documents, same mix of compact and
    // pretty-printed ones) one after the other on one thread, the documents already in memory.
    Benchmark("verify-only/1-thread/10k-8KB") { benchmark in
        for _ in benchmark.scaledIterations {
            for i in 0..<BatchCorpus.records {
                blackHole(try! corpus.verifier.verify(corpus.distinct[i % corpus.distinct.count], mvpd: BatchCorpus.mvpd))
            }
        }
    }
}
