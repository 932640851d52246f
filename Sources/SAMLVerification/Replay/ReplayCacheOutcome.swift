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
