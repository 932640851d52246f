import Foundation
import Logging

/// A logger whose lines are kept in memory (message, level and metadata as text), so a test can
/// check what the gateway logged and how often.
final class CapturedLog: @unchecked Sendable {
    struct Line {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lock = NSLock()
    private var stored: [Line] = []

    var lines: [Line] { lock.withLock { stored } }

    var logger: Logger {
        Logger(label: "captured") { _ in CapturedLogHandler(log: self) }
    }

    func append(_ line: Line) {
        lock.withLock { stored.append(line) }
    }
}
