import Dispatch
import Synchronization

/// One backend base URL and its passive health: after a failure that says "cannot reach", it is
/// skipped for the cool-down, then tried again by live traffic (no active probing).
public final class UpstreamEndpoint: Sendable {
    /// `http://host:port`, no trailing slash.
    public let baseURL: String
    private let unhealthyUntil = Atomic<UInt64>(0)

    public init(baseURL: String) {
        self.baseURL = baseURL
    }

    public func isHealthy(at now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        unhealthyUntil.load(ordering: .relaxed) <= now
    }

    public func markFailed(coolDownNanos: UInt64) {
        unhealthyUntil.store(DispatchTime.now().uptimeNanoseconds + coolDownNanos, ordering: .relaxed)
    }

    public func markHealthy() {
        if unhealthyUntil.load(ordering: .relaxed) != 0 { unhealthyUntil.store(0, ordering: .relaxed) }
    }
}
