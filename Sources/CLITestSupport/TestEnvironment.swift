// The test process's surroundings, shared by the test targets: where scratch files go, how long
// a wait may last, and randomness a failing case can be replayed from.

import Foundation

/// Scratch directories of one test process, all under one parent that is removed when the
/// process exits: a test run leaves nothing behind in the temporary directory (hundreds of
/// directories per run otherwise, on developers' machines that run the suite all day).
package enum TestScratch {
    /// `$TMPDIR/samlgate-test-run-<pid>`, created on first use; removed at exit.
    static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("samlgate-test-run-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestScratch.root) }
        return url
    }()

    /// A fresh path `<root>/<name>-<uuid>` (not created: callers create what they need there).
    package static func directory(_ name: String) -> URL {
        root.appendingPathComponent("\(name)-\(UUID().uuidString)")
    }
}

// MARK: - Waiting

/// How much longer than usual a test waits before it calls something lost: 1, or the factor in
/// `SAMLGATE_TEST_TIME_SCALE`. `make sanitize` sets it: sanitizer builds run several times slower,
/// and with every suite in parallel a deadline that is generous for the ordinary build becomes the
/// failure. Only waits scale, never what a test asserts about the gateway's own timeouts.
package enum TestTiming {
    package static let scale: Double = ProcessInfo.processInfo.environment["SAMLGATE_TEST_TIME_SCALE"].flatMap(Double.init).map { max($0, 1) } ?? 1

    /// `seconds` stretched by ``scale``.
    package static func seconds(_ seconds: Double) -> Double { seconds * scale }
}

// MARK: - Seeded randomness

/// SplitMix64: a tiny deterministic generator so a failing random case can be replayed by seed
/// (test-only support shared by the test targets).
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
