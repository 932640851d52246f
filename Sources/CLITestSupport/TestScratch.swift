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
