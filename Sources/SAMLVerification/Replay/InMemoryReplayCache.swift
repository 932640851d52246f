import Foundation
import NIOConcurrencyHelpers

/// A bounded, thread-safe, in-process ``ReplayCache``.
///
/// Entries live until their expiry (the assertion's `NotOnOrAfter` plus the clock skew) and
/// are dropped lazily on insert. When `capacity` live entries are held, a new id is refused
/// (``ReplayCacheOutcome/full``) instead of evicting a live one: memory stays bounded and a
/// flood cannot make a captured assertion replayable. Size `capacity` above the number of
/// assertions accepted per validity window.
public final class InMemoryReplayCache: ReplayCache {
    private struct State {
        var expiries: [String: Date] = [:]
        var heap = ReplayEntryHeap()
    }

    private let state = NIOLockedValueBox(State())
    public let capacity: Int

    public init(capacity: Int = 200_000) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Number of entries currently held (expired ones may still count until the next insert).
    public var count: Int {
        state.withLockedValue { $0.expiries.count }
    }

    public func insertIfAbsent(_ key: String, expiresAt: Date, now: Date) -> ReplayCacheOutcome {
        state.withLockedValue { state in
            // Drop expired entries. Invariant: every heap entry whose key maps to the same
            // expiry in `expiries` is live; stale heap entries are skipped.
            while let top = state.heap.min, top.expiry <= now {
                state.heap.popMin()
                if state.expiries[top.key] == top.expiry { state.expiries[top.key] = nil }
            }
            if let existing = state.expiries[key], existing > now {
                return .replayed
            }
            guard state.expiries.count < capacity else { return .full }
            state.expiries[key] = expiresAt
            state.heap.push(expiresAt, key)
            return .recorded
        }
    }
}
