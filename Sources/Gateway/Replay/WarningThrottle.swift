import Dispatch
import Synchronization

/// At most one log line per ``interval`` for a warning that could otherwise be written once per
/// request — the shared replay store down under `replay-store-failure: open`, where every
/// exchange of an outage would log one: thousands of identical lines a second flood the log
/// pipeline and cost more than the exchanges themselves. The lines left out are counted, and
/// the next line written says how many, so nothing is hidden from whoever reads the log.
///
/// Shared by every event loop; one short lock per call.
package final class WarningThrottle: Sendable {
    private struct State {
        /// Uptime (ns) before which nothing more is written; 0: the next call writes.
        var quietUntil: UInt64 = 0
        var suppressed = 0
    }

    /// Nanoseconds between two lines.
    package let interval: UInt64
    private let state = Mutex(State())

    package init(intervalNanoseconds: UInt64 = 1_000_000_000) {
        interval = intervalNanoseconds
    }

    /// Whether to write the line now: `nil` when it is to be left out (and counted), otherwise
    /// the number left out since the last line written.
    ///
    /// - Parameter now: uptime in nanoseconds (a monotonic clock: a wall-clock step must not
    ///   silence the warning for hours).
    package func admit(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Int? {
        state.withLock { state in
            guard now >= state.quietUntil else {
                state.suppressed += 1
                return nil
            }
            let suppressed = state.suppressed
            state.suppressed = 0
            state.quietUntil = now &+ interval
            return suppressed
        }
    }
}
