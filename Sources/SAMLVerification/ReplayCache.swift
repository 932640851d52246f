import Foundation

/// Remembers accepted assertion ids until they expire, so that the same assertion cannot be
/// used twice (`replayed`).
///
/// A protocol so that a store shared by several gateway instances can replace the default
/// ``InMemoryReplayCache`` later. Implementations must be safe to call from many threads.
public protocol ReplayCache: Sendable {
    /// Records `key` until `expiresAt`. Returns `false`, recording nothing, when `key` is already
    /// recorded and has not expired at `now`.
    func insertIfAbsent(_ key: String, expiresAt: Date, now: Date) -> Bool
}
