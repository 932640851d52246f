import NIOCore
import NIOHTTP1

/// The rules of one ``UpstreamTrip`` as a value: which endpoint it tries next and when it gives
/// up, whether a failed write may go to another connection, whose fault a passed deadline is,
/// when the backend's silence is a read timeout, and whether the connection goes back to the
/// pool. It touches no channel and reads no clock (times come in as arguments), so every rule is
/// tested alone (`UpstreamTripStateTests`); the trip performs what it returns. An event in the
/// wrong phase is a bug of the trip's: it asserts in a debug build.
struct UpstreamTripState {
    /// Where the trip is.
    enum Phase: Equatable {
        /// Waiting for a connection to `order[attempt - 1]` (pooled or being opened).
        case connecting
        /// A connection carries the request: its body, its answer, or both.
        case attached
        /// Answered, failed or cancelled: every later event is ignored.
        case done
    }

    /// What to do after a connection failed before its request left (``connectFailed(_:)``,
    /// ``headWriteFailed(reused:closedChannel:error:)``).
    enum Next: Equatable {
        /// Try this endpoint (a pooled connection of it, or a new one).
        case connect(endpoint: Int)
        /// Give up with this failure, already counted against the endpoints that caused it.
        case fail(UpstreamFailure)
    }

    /// What the look at ``wakeAt`` found (``wake(at:connectionWritable:)``).
    enum Wake: Equatable {
        /// Nothing due: the next look is at ``wakeAt``.
        case next(NIODeadline)
        /// A deadline passed.
        case fail(UpstreamFailure)
    }

    /// The endpoints to try, in order (the healthy ones from the round-robin cursor).
    let order: [Int]
    let readTimeout: TimeAmount
    let totalTimeout: TimeAmount
    private(set) var phase: Phase = .connecting
    /// How many tries were begun; the current one is `order[attempt - 1]`.
    private(set) var attempt = 0
    /// The client's body has ended (or there was none to stream).
    private(set) var requestEnded: Bool
    /// The request's end went to the backend's connection: its read clock may run.
    private(set) var requestWritten = false
    /// The answer's head was relayed to the client.
    private(set) var responseStarted = false
    private var responseKeepAlive = true
    /// The client is not taking the answer: the backend's reads are held.
    private(set) var readPaused = false
    /// The parts held before the connection went to it: a retry after this would lack them.
    private var partsHandedOver = false
    private var lastFailure: UpstreamFailure?
    /// When the trip next needs a look (`distantFuture` once it is done): the earlier of the
    /// total deadline and the read deadline last known. The trip has no timer of its own: its
    /// client connection's one timer fires by then.
    private(set) var wakeAt: NIODeadline = .distantFuture
    private var totalDeadline: NIODeadline = .distantFuture
    /// The backend's read clock runs from here: something was written or read. `nil` until the
    /// request is written (an upload may take longer than the read timeout).
    private var lastActivity: NIODeadline?

    /// An event this machine did not allow, not yet reported by the trip.
    private var fault: PendingStateFault

    /// - Parameters:
    ///   - requestEnded: the whole body is in memory (nothing is streamed).
    ///   - trapsOnFault: whether a fault stops a debug build (the tests of the release path say `false`).
    init(order: [Int], readTimeout: TimeAmount, totalTimeout: TimeAmount, requestEnded: Bool, trapsOnFault: Bool = true) {
        self.order = order
        self.readTimeout = readTimeout
        self.totalTimeout = totalTimeout
        self.requestEnded = requestEnded
        fault = PendingStateFault(.trip, traps: trapsOnFault)
    }

    /// The fault, once: the trip reports it.
    mutating func takeFault() -> StateFault? {
        fault.take()
    }

    /// An event the phase does not allow: a bug of the trip's. A release build fails the trip as
    /// broken (the client gets `502`, or its connection closes mid-answer), never sends on.
    private mutating func illegal(_ event: String) -> UpstreamFailure {
        fault.record("\(event) (\(phase))")
        return UpstreamFailure(.broken, "the trip's state did not allow \(event)")
    }

    var isDone: Bool { phase == .done }

    /// The endpoint of the try in progress (`nil` before the first).
    var currentEndpoint: Int? { attempt > 0 ? order[attempt - 1] : nil }

    // MARK: - connecting

    /// The trip begins at `now`: the total deadline starts, and the first endpoint is tried.
    /// No deadline falls before the first look (the read timeout runs from the end of the
    /// request, not earlier than now): one look for a trip that ends before it is due.
    mutating func start(at now: NIODeadline) -> Next {
        totalDeadline = now + totalTimeout
        wakeAt = min(totalDeadline, now + readTimeout)
        return nextEndpoint()
    }

    private mutating func nextEndpoint() -> Next {
        guard attempt < order.count else {
            phase = .done
            wakeAt = .distantFuture
            return .fail(lastFailure ?? UpstreamFailure(.connect, "no upstream configured"))
        }
        attempt += 1
        phase = .connecting
        return .connect(endpoint: order[attempt - 1])
    }

    /// The connection to the current endpoint could not be made (counted against it by the
    /// trip): nothing was sent, so the next endpoint may have the request.
    mutating func connectFailed(_ failure: UpstreamFailure) -> Next {
        guard phase == .connecting else { return .fail(illegal("a connect failure when not connecting")) }
        lastFailure = failure
        return nextEndpoint()
    }

    /// A connection is ready: its head is written first, then what was held. Returns the
    /// failure of a trip that was not connecting.
    mutating func attached() -> UpstreamFailure? {
        guard phase == .connecting else { return illegal("a connection attached when not connecting") }
        phase = .attached
        partsHandedOver = false
        return nil
    }

    /// The held parts went to the attached connection after its head. Returns whether they
    /// include the request's end (the read clock then starts, see ``activity(at:)``).
    mutating func handedOver() -> Bool {
        partsHandedOver = true
        if requestEnded { requestWritten = true }
        return requestWritten
    }

    /// The head's write failed. On a pooled connection the backend closed between requests,
    /// before any of the held parts went to it, nothing reached the backend: the same endpoint
    /// is tried again (a fresh connection, or the next pooled one). Anything else is a broken
    /// trip: the request may have reached the backend, and is not sent twice. `nil` once the
    /// answer has begun: the connection's own events end the trip then.
    mutating func headWriteFailed(reused: Bool, closedChannel: Bool, error: any Error) -> Next? {
        guard phase == .attached, !responseStarted else { return nil }
        if reused && closedChannel && !partsHandedOver {
            attempt -= 1
            return nextEndpoint()
        }
        phase = .done
        wakeAt = .distantFuture
        return .fail(.broken(error))
    }

    // MARK: - the request

    /// The client's streamed body ended. Returns whether its end goes to the backend now (a
    /// connection is attached): the read clock starts.
    mutating func clientBodyEnded() -> Bool {
        requestEnded = true
        guard phase == .attached else { return false }
        requestWritten = true
        return true
    }

    // MARK: - the answer

    /// The answer's head. A switch of protocols nobody asked for (the gateway drops `Upgrade`)
    /// leaves a connection that is no longer HTTP: an invalid answer, not held against the
    /// backend's health (a client may be able to provoke it). Interim 1xx heads never reach a
    /// trip: the decoder drops them.
    mutating func responseHead(status: HTTPResponseStatus, keepAlive: Bool) -> UpstreamFailure? {
        guard phase == .attached else { return illegal("an answer without a connection") }
        if status == .switchingProtocols { return .switchedProtocols }
        assert(status.code >= 200, "the decoder drops interim answers")
        if status.code < 200 { return UpstreamFailure(.invalidResponse, "an interim answer where a final one was due") }
        responseStarted = true
        responseKeepAlive = keepAlive
        return nil
    }

    /// The answer ended. Returns whether the connection goes back to the pool: only after a
    /// complete exchange both ways (a backend that answered before it read the whole body would
    /// read the rest as the next request) that both sides kept alive.
    mutating func responseEnded(requestKeepAlive: Bool) -> Bool {
        phase = .done
        wakeAt = .distantFuture
        return requestWritten && responseKeepAlive && requestKeepAlive
    }

    /// The trip fails or is cancelled. Returns the endpoint to count a failure against: the
    /// attached connection's (the trip knows it), else the one being connected to.
    mutating func finish() -> Int? {
        let connecting = phase == .connecting
        phase = .done
        wakeAt = .distantFuture
        return connecting ? currentEndpoint : nil
    }

    // MARK: - clocks

    /// Something was written to or read from the backend at `now`: the read clock starts again.
    /// Returns the earlier look to schedule when the read deadline now falls before ``wakeAt``
    /// (an upload that outlasted the read timeout left it at the total deadline).
    mutating func activity(at now: NIODeadline) -> NIODeadline? {
        lastActivity = now
        let readDeadline = now + readTimeout
        guard readDeadline < wakeAt else { return nil }
        wakeAt = readDeadline
        return readDeadline
    }

    /// The client cannot take more of the answer for now.
    mutating func pauseResponse() {
        readPaused = true
    }

    /// The client takes the answer again at `now`. The backend could not be heard while its
    /// reads were held back: its read clock starts again (``activity(at:)``'s return).
    mutating func resumeResponse(at now: NIODeadline) -> NIODeadline? {
        defer { readPaused = false }
        guard readPaused, lastActivity != nil else { return nil }
        return activity(at: now)
    }

    /// Whether the trip is held up by its client rather than by the backend: the answer is held
    /// back because the client is not taking it, or the client's body is still arriving while
    /// the backend takes all it is given (`connectionWritable`; a backend that stops reading
    /// makes it unwritable and the wait its own). While connecting, the wait is the backend's.
    func waitingOnClient(connectionWritable: Bool) -> Bool {
        if readPaused { return true }
        guard phase == .attached, !requestEnded, !responseStarted else { return false }
        return connectionWritable
    }

    /// The look at ``wakeAt`` (`now` at or after it): which deadline passed, else when to look
    /// next. Past the total deadline the fault is the client's when the trip waits on it
    /// (`client_timeout`, never counted against the backend); the read clock measures the
    /// backend's silence only while the trip waits on the backend.
    mutating func wake(at now: NIODeadline, connectionWritable: Bool) -> Wake {
        guard phase != .done, now >= wakeAt else {
            _ = illegal("a look at a trip not due")
            return .next(wakeAt)
        }
        let clientsTurn = waitingOnClient(connectionWritable: connectionWritable)
        if now >= totalDeadline { return .fail(clientsTurn ? .clientTooSlow : .totalTimeout) }
        guard let lastActivity, !clientsTurn else {
            wakeAt = totalDeadline
            return .next(totalDeadline)
        }
        let readDeadline = lastActivity + readTimeout
        if now >= readDeadline { return .fail(.readTimeout) }
        wakeAt = min(readDeadline, totalDeadline)
        return .next(wakeAt)
    }
}
