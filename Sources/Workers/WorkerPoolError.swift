/// Why the ``WorkerPool`` refused a job.
package enum WorkerPoolError: Error, Sendable {
    /// The queue is at its bound: answer 503 `overloaded` with `Retry-After`.
    case overloaded
    /// The pool is shutting down.
    case stopped
}
