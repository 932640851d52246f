import Foundation

/// Where a ``ScriptedRedis`` connection reports to: set once the server is bound (the child
/// initializer is built before the server object exists).
final class ScriptedRedisCallbacks: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: ScriptedRedis?

    var server: ScriptedRedis? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
