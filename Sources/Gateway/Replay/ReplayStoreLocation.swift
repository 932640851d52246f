import RESP

/// Where accepted assertion ids are recorded (setting `replay-store`).
package enum ReplayStoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// In this process (``SAMLVerification/InMemoryReplayCache``): right for one process only;
    /// a second replica would accept an assertion replayed to it.
    case memory
    /// A Redis server every replica shares (``SharedReplayStore``).
    case redis(RedisURL)

    /// `memory`, or the URL with its password masked.
    package var description: String {
        switch self {
        case .memory: "memory"
        case .redis(let url): url.description
        }
    }
}
