import Synchronization

/// Whether Redis answered usably the last time anyone asked, across every loop's pool: what a
/// readiness probe reports without sending a command of its own.
final class RESPHealth: Sendable {
    /// 0 nothing known yet, 1 up, 2 down.
    private let state = Atomic<Int>(0)

    func record(up: Bool) {
        state.store(up ? 1 : 2, ordering: .relaxed)
    }

    var isUp: Bool? {
        switch state.load(ordering: .relaxed) {
        case 1: true
        case 2: false
        default: nil
        }
    }
}
