import NIOCore
import Workers

/// What the data plane reaches outside its event loop, replaceable as a whole: how upstream
/// connections are opened and where an exchange's verification runs. The gateway uses the
/// network and the worker pool; the tests run whole requests — trips, retries, exchanges and
/// every timeout — on one `EmbeddedEventLoop`, with a scripted upstream and the verification run
/// in line, so nothing leaves the test's thread and time is the loop's virtual time.
struct DataPlaneSeams {
    var connector: any UpstreamConnector = NetworkUpstreamConnector()
    /// Where an exchange's verification runs; `nil`: the core's ``WorkerPool``.
    var executor: (any VerificationExecutor)?
}

/// Runs an exchange's verification away from the event loop and tells whether it was taken
/// (``WorkerPool/enqueue(_:)``'s contract: `nil` when accepted, else why not).
protocol VerificationExecutor: Sendable {
    func enqueue(_ job: @escaping WorkerPool.Job) -> WorkerPoolError?
}

extension WorkerPool: VerificationExecutor {}
