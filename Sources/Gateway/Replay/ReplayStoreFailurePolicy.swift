/// What an exchange does when the shared replay store cannot answer (setting
/// `replay-store-failure`): Redis down, unreachable, or slower than `replay-store-timeout`.
package enum ReplayStoreFailurePolicy: String, Sendable, CaseIterable {
    /// Refuse: `503 replay_store_unavailable` with `Retry-After`, nothing forwarded. No
    /// assertion is ever accepted without being recorded.
    case closed
    /// Accept unrecorded: the exchange goes on, counted in
    /// `samlgate_replay_store_unrecorded_total` and logged as a warning. An assertion accepted
    /// this way can be replayed until it expires.
    case open
}
