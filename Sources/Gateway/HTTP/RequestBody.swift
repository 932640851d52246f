import NIOCore

/// What happens to the body of the request in flight.
enum RequestBody {
    /// The answer does not depend on it: read and dropped.
    case discard
    /// Streamed to the backend.
    case forward(UpstreamTrip)
    /// A token exchange's: collected by its ``ExchangeFlow`` for the workers.
    case collect(ExchangeFlow)
    /// Complete (or given up); a worker or the backend is answering.
    case done
}
