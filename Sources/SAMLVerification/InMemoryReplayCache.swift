import Foundation
import Synchronization

/// A bounded, thread-safe, in-process ``ReplayCache``.
///
/// Entries live until their expiry (the assertion's `NotOnOrAfter` plus the clock skew) and
/// are dropped lazily on insert. When `capacity` is reached even after dropping expired
/// entries, the entry closest to expiry is evicted: memory stays bounded under a flood, at the
/// price of forgetting the assertion with the least life left. Size `capacity` above the
/// number of assertions accepted per validity window to keep the protection complete.
public final class InMemoryReplayCache: ReplayCache {
    private struct State {
        var expiries: [String: Date] = [:]
        var heap = ReplayEntryHeap()
    }

    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 200_000) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Number of entries currently held (expired ones may still count until the next insert).
    public var count: Int {
        state.withLock { $0.expiries.count }
    }

    public func insertIfAbsent(_ key: String, expiresAt: Date, now: Date) -> Bool {
        state.withLock { state in
            // Drop expired entries. Invariant: every heap entry whose key maps to the same
            // expiry in `expiries` is live; stale heap entries are skipped.
            while let top = state.heap.min, top.expiry <= now {
                state.heap.popMin()
                if state.expiries[top.key] == top.expiry { state.expiries[top.key] = nil }
            }
            if let existing = state.expiries[key], existing > now {
                return false
            }
            while state.expiries.count >= capacity, let top = state.heap.popMin() {
                if state.expiries[top.key] == top.expiry { state.expiries[top.key] = nil }
            }
            state.expiries[key] = expiresAt
            state.heap.push(expiresAt, key)
            return true
        }
    }
}
