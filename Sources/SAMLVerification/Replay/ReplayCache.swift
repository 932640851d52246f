import Foundation

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
