// Replay protection: what is recorded for an accepted assertion, the cache protocol that
// records it, and the in-process cache.

import Foundation
import Synchronization

// MARK: - ReplayCache

/// Remembers accepted assertion ids until they expire, so that the same assertion cannot be
/// used twice (`replayed`).
///
/// A protocol so that a store shared by several gateway instances can replace the default
/// ``InMemoryReplayCache`` later. Implementations must be safe to call from many threads, and
/// must fail closed: when they cannot remember a new id they answer ``ReplayCacheOutcome/full``
/// rather than forget a live one.
public protocol ReplayCache: Sendable {
    /// Records `key` until `expiresAt`, unless it is already recorded and has not expired at
    /// `now` (``ReplayCacheOutcome/replayed``) or there is no room (``ReplayCacheOutcome/full``).
    func insertIfAbsent(_ key: String, expiresAt: Date, now: Date) -> ReplayCacheOutcome
}

// MARK: - ReplayCacheOutcome

/// What a ``ReplayCache`` did with a new assertion id.
public enum ReplayCacheOutcome: Sendable, Equatable {
    /// First use: recorded until its expiry.
    case recorded
    /// Seen before and not expired: a replay.
    case replayed
    /// No room even after dropping expired ids; nothing recorded. The caller refuses the
    /// response (`replay_cache_full`) — accepting it unrecorded would allow a replay.
    case full
}

// MARK: - ReplayClaim

/// What replay protection records for one accepted assertion: which assertion (``key``) and
/// until when it could be accepted (``expiresAt``).
///
/// The verifier derives it once, in one place, for its own ``ReplayCache`` and for callers
/// that keep the record elsewhere (the gateway's shared store, which must not be asked from a
/// worker thread): both then treat the same assertion as the same one.
public struct ReplayClaim: Sendable, Equatable {
    /// The signed issuer, a NUL, the assertion ID: the signer's identity and its assertion,
    /// never the caller-chosen MVPD name (several trust entries may trust one IdP, and a
    /// response without a signed Issuer is refused before a claim is made). Not personal, but
    /// callers storing it outside the process hash it.
    public let key: String
    /// The assertion's acceptance bound (`NotOnOrAfter`) plus the largest clock skew of the
    /// trust store (any MVPD trusting the same issuer may allow it): after this every MVPD's
    /// verifier refuses the assertion anyway, so the record can go.
    public let expiresAt: Date

    public init(key: String, expiresAt: Date) {
        self.key = key
        self.expiresAt = expiresAt
    }
}

// MARK: - InMemoryReplayCache

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

    public func insertIfAbsent(_ key: String, expiresAt: Date, now: Date) -> ReplayCacheOutcome {
        state.withLock { state in
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

// MARK: - ReplayEntryHeap

/// A binary min-heap of (expiry, key), so the replay cache can drop expired entries in
/// O(log n) each without scanning.
struct ReplayEntryHeap {
    private(set) var entries: [(expiry: Date, key: String)] = []

    var count: Int { entries.count }
    var min: (expiry: Date, key: String)? { entries.first }

    mutating func push(_ expiry: Date, _ key: String) {
        entries.append((expiry, key))
        var child = entries.count - 1
        // Invariant: the heap property holds everywhere except between `child` and its parent.
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].expiry < entries[parent].expiry else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> (expiry: Date, key: String)? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let result = entries.removeLast()
        var parent = 0
        // Invariant: the heap property holds everywhere except between `parent` and its children.
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].expiry < entries[smallest].expiry { smallest = left }
            if right < entries.count && entries[right].expiry < entries[smallest].expiry { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return result
    }
}
