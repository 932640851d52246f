import Synchronization

/// The port a server bound, published once it listens (port 0 picks a free one), for callers
/// that wait for it: the CLI prints it, tests connect to it.
package final class ListeningPort: Sendable {
    private struct State {
        var port: Int?
        var waiters: [CheckedContinuation<Int, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    package func publish(_ port: Int) {
        let waiters = state.withLock { state in
            state.port = port
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    /// Waits until ``publish(_:)`` has been called.
    package func value() async -> Int {
        await withCheckedContinuation { continuation in
            let ready: Int? = state.withLock { state in
                if let port = state.port { return port }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
