import Dispatch
import Logging
import NIOCore
import NIOHTTP1

/// What a trip reports to the client connection that started it (on that connection's loop).
protocol UpstreamTripDelegate: AnyObject {
    /// The backend's answer head (never an interim 1xx).
    func tripResponded(_ head: HTTPResponseHead)
    func tripBody(_ part: ByteBuffer)
    /// The answer is complete.
    func tripFinished()
    /// No answer, or the answer broke off; `responseStarted` says whether a head was relayed.
    func tripFailed(_ failure: UpstreamFailure, responseStarted: Bool)
    /// The trip takes more of the client's body again (after ``UpstreamTrip/wantsBody`` was false).
    func tripWantsBody()
    /// Send what was relayed so far (the end of a batch of reads from the backend).
    func tripFlush()
    /// Call ``UpstreamTrip/wake(now:)`` no earlier than `deadline` and not much later: the
    /// delegate's timer keeps the trip's clocks too (see ``UpstreamTrip/wakeAt``). Not called for
    /// the first look, which the delegate reads from ``UpstreamTrip/wakeAt`` after
    /// ``UpstreamTrip/start(flushingLater:)``.
    func tripWake(at deadline: NIODeadline)
}

/// One request's way to a backend and back: picks the endpoint (round-robin over the healthy
/// ones), takes a pooled connection or opens one, writes the request — streamed as the client
/// sends it, or from memory — relays the answer to its delegate, and hands the connection back
/// to the pool when the exchange completed cleanly.
///
/// Retries: only when nothing was sent (the connection could not be made, or a pooled connection
/// turned out closed before the request went out); then the next endpoint gets it. The body parts
/// that arrive before a connection is ready are held, up to ``pendingLimit`` (the client is paused
/// beyond it), so a retry never lacks what the client already sent.
///
/// Timeouts: `read` from the end of the request to the answer and between its parts, `total`
/// for the whole trip (answer included). Whose fault a timeout is depends on whom the trip was
/// waiting on (``waitingOnClient``): a client that uploads, or reads the answer, more slowly
/// than the deadline allows is the client's timeout, never counted against the backend.
final class UpstreamTrip {
    /// Body bytes held while no connection is ready before the client is paused.
    static let pendingLimit = 256 * 1024

    private let client: UpstreamClient
    private let pool: UpstreamConnectionPool
    private let head: HTTPRequestHead
    private let order: [Int]
    private var attempt = 0
    private weak var delegate: (any UpstreamTripDelegate)?
    private let logger: Logger

    private var connection: UpstreamConnection?
    /// Parts not yet written: everything until a connection is ready.
    private var pending: [HTTPClientRequestPart] = []
    private var pendingBytes = 0
    private var requestEnded = false
    private var requestWritten = false
    private var responseStarted = false
    /// An interim 1xx answer is being skipped (its end belongs to it).
    private var skippingInterim = false
    private var responseKeepAlive = true
    private var readPaused = false
    private var done = false
    private var started: UInt64 = 0
    /// When the trip next needs a look (`distantFuture` once it is done): the earlier of the
    /// total deadline and the read deadline it last knew of, moved on by ``wake(now:)`` when reads
    /// moved the read deadline later. The trip has no timer of its own: its delegate's timer —
    /// the client connection's, armed anyway for its idle clock — fires by then
    /// (``UpstreamTripDelegate/tripWake(at:)``), so a trip costs no timer set and cancelled per
    /// request (each a heap insertion and removal on the event loop), only a look when the
    /// connection's timer is due.
    private(set) var wakeAt: NIODeadline = .distantFuture
    private var totalDeadline: NIODeadline = .distantFuture
    /// The read timeout runs from here; `nil` until the request is written.
    private var lastActivity: NIODeadline?
    private var lastFailure: UpstreamFailure?
    /// The held parts went to the current connection: a retry after this would lack them.
    private var partsHandedOver = false
    /// Within ``start(flushingLater:)``: a connection attached now is flushed by the caller.
    private var holdingFlush = false

    /// - Parameters:
    ///   - head: method, path (without the endpoint's prefix) and headers; `Host` is added per endpoint.
    ///   - body: the whole body when it is in memory (then ``send(_:)`` and ``end()`` are not used).
    init(
        client: UpstreamClient, pool: UpstreamConnectionPool, head: HTTPRequestHead, body: ByteBuffer?,
        delegate: any UpstreamTripDelegate, logger: Logger
    ) {
        self.client = client
        self.pool = pool
        self.head = head
        order = client.pickOrder()
        self.delegate = delegate
        self.logger = logger
        if let body {
            if body.readableBytes > 0 { pending.append(.body(.byteBuffer(body))) }
            pending.append(.end(nil))
            requestEnded = true
        }
    }

    /// Whether the trip takes more of the client's body now; when false, the client's reads stop
    /// until ``UpstreamTripDelegate/tripWantsBody()``.
    var wantsBody: Bool {
        if let connection { return connection.isWritable }
        return pendingBytes < Self.pendingLimit
    }

    /// - Parameter flushingLater: started from inside a read of the client's connection, whose
    ///   end calls ``flush()``: the head then leaves with the body parts of that read in one
    ///   write (and the backend reads it once) instead of a write of its own.
    func start(flushingLater: Bool = false) {
        started = DispatchTime.now().uptimeNanoseconds
        let now = NIODeadline.now()
        totalDeadline = now + client.totalTimeout
        // No deadline can fall before this first look (the read timeout runs from the end of
        // the request, not earlier than now): one look for a trip that ends before it is due.
        // The starter reads ``wakeAt`` once this returns: the delegate is not called for it.
        wakeAt = min(totalDeadline, now + client.readTimeout)
        holdingFlush = flushingLater
        nextAttempt()
        holdingFlush = false
    }

    /// A part of the client's streamed body; written out at the next ``flush()``.
    func send(_ part: ByteBuffer) {
        guard !done else { return }
        if let connection {
            connection.write(.body(.byteBuffer(part)), promise: nil)
        } else {
            pendingBytes += part.readableBytes
            pending.append(.body(.byteBuffer(part)))
        }
    }

    /// Sends what was written: once per batch of reads from the client, so a body that arrives in
    /// several reads costs one write to the backend per batch, not one per read.
    func flush() {
        guard !done else { return }
        connection?.flush()
    }

    /// The end of the client's streamed body.
    func end() {
        guard !done else { return }
        requestEnded = true
        if let connection {
            requestWritten = true
            connection.write(.end(nil), promise: nil)
            connection.flush()
            armReadTimer()
        } else {
            pending.append(.end(nil))
        }
    }

    /// The client cannot take more of the answer for now / again.
    func pauseResponse() {
        readPaused = true
        connection?.pauseReading()
    }

    func resumeResponse() {
        // The backend could not be heard while its reads were held back: its read clock starts
        // again now.
        if readPaused && lastActivity != nil { armReadTimer() }
        readPaused = false
        connection?.resumeReading()
    }

    /// The client went away or its body broke: drop the connection, report nothing.
    func cancel() {
        guard !done else { return }
        done = true
        clearWake()
        connection?.trip = nil
        connection?.close()
        connection = nil
    }

    // MARK: connecting

    private func nextAttempt() {
        guard !done else { return }
        guard attempt < order.count else {
            fail(lastFailure ?? UpstreamFailure(.connect, "no upstream configured"), counted: false)
            return
        }
        let index = order[attempt]
        attempt += 1
        if let pooled = pool.takeIdle(index) {
            attach(pooled)
            return
        }
        pool.connect(index) { [self] result in
            switch result {
            case .success(let opened):
                if done {
                    opened.close()
                } else {
                    attach(opened)
                }
            case .failure(let failure):
                guard !done else { return }
                record(failure, endpoint: client.endpoints[index])
                lastFailure = failure
                nextAttempt()
            }
        }
    }

    private func attach(_ opened: UpstreamConnection) {
        connection = opened
        opened.trip = self
        partsHandedOver = false
        if readPaused { opened.pauseReading() }
        let endpoint = client.endpoints[opened.endpointIndex]
        // A pooled connection closed by the backend between requests fails this first write
        // before any byte left: then nothing was sent, and the next connection may have it.
        let headWritten = pool.eventLoop.makePromise(of: Void.self)
        opened.writeHead(head, prefix: endpoint.pathPrefix, authority: endpoint.authority, promise: headWritten)
        headWritten.futureResult.assumeIsolated().whenFailure { [weak self, weak opened] error in
            guard let self, let opened, connection === opened, !responseStarted else { return }
            opened.trip = nil
            connection = nil
            if opened.reused, Self.isClosedChannel(error), !partsHandedOver {
                attempt -= 1
                nextAttempt()
            } else {
                fail(.broken(error))
            }
        }
        // Failed at once on a closed pooled connection: the next attempt has taken over.
        guard connection === opened else { return }
        for part in pending {
            if case .end = part { requestWritten = true }
            opened.write(part, promise: nil)
        }
        pending = []
        pendingBytes = 0
        partsHandedOver = true
        if !holdingFlush { opened.flush() }
        // The read timeout runs from the end of the request (an upload may take longer than it).
        if requestWritten { armReadTimer() }
        if !requestEnded && opened.isWritable { delegate?.tripWantsBody() }
    }

    private static func isClosedChannel(_ error: any Error) -> Bool {
        if let channel = error as? ChannelError, channel == .ioOnClosedChannel || channel == .alreadyClosed { return true }
        return false
    }

    // MARK: the answer (called by the connection)

    func upstreamHead(_ head: HTTPResponseHead) {
        guard !done else { return }
        armReadTimer()
        if head.status == .switchingProtocols {
            // The gateway never asks for an upgrade (it drops `Upgrade`): after a 101 the
            // connection is no longer HTTP and must not carry another request. An invalid answer,
            // not held against the upstream's health: a client may be able to provoke it.
            return fail(.switchedProtocols)
        }
        if head.status.code < 200 {
            skippingInterim = true
            return
        }
        responseStarted = true
        responseKeepAlive = head.isKeepAlive
        client.endpoints[connection?.endpointIndex ?? 0].markHealthy()
        client.metrics.upstreamLatency(
            endpoint: client.endpoints[connection?.endpointIndex ?? 0].baseURL, nanos: DispatchTime.now().uptimeNanoseconds - started)
        delegate?.tripResponded(head)
    }

    func upstreamBody(_ part: ByteBuffer) {
        guard !done else { return }
        armReadTimer()
        delegate?.tripBody(part)
    }

    func upstreamEnd() {
        guard !done else { return }
        if skippingInterim {
            skippingInterim = false
            return
        }
        done = true
        clearWake()
        if let connection {
            self.connection = nil
            // Reusable only after a complete exchange: a backend that answered before reading the
            // whole body would read the rest as the next request.
            if requestWritten && responseKeepAlive && head.isKeepAlive {
                pool.release(connection)
            } else {
                connection.trip = nil
                connection.close()
            }
        }
        delegate?.tripFinished()
    }

    /// The end of a batch of reads from the backend: what was relayed goes out now.
    func upstreamReadComplete() {
        guard !done else { return }
        delegate?.tripFlush()
    }

    func upstreamWritable() {
        guard !done, !requestEnded else { return }
        delegate?.tripWantsBody()
    }

    func upstreamClosed() {
        guard !done else { return }
        fail(.closed)
    }

    func upstreamError(_ error: any Error) {
        guard !done else { return }
        fail(.broken(error))
    }

    // MARK: failing

    /// Starts (or moves on) the read timeout: something was written or read. Usually only
    /// noted: the next look is already due no later than the read deadline. It is moved earlier only
    /// when it was set further out (an upload that outlasted the read timeout left it at the
    /// total deadline).
    private func armReadTimer() {
        let now = NIODeadline.now()
        lastActivity = now
        let readDeadline = now + client.readTimeout
        if readDeadline < wakeAt { schedule(at: readDeadline) }
    }

    private func schedule(at deadline: NIODeadline) {
        wakeAt = deadline
        delegate?.tripWake(at: deadline)
    }

    /// The look at ``wakeAt``: fails the trip whose deadline passed, else sets the next look.
    func wake(now: NIODeadline) {
        guard !done, now >= wakeAt else { return }
        wakeAt = .distantFuture
        let clientsTurn = waitingOnClient
        if now >= totalDeadline { return fail(clientsTurn ? .clientTooSlow : .totalTimeout) }
        // The read clock measures the backend's silence: not while the trip waits on the client.
        guard let lastActivity, !clientsTurn else { return schedule(at: totalDeadline) }
        let readDeadline = lastActivity + client.readTimeout
        if now >= readDeadline { return fail(.readTimeout) }
        schedule(at: min(readDeadline, totalDeadline))
    }

    /// Whether the trip is held up by its client rather than by the backend: the client's body
    /// is still arriving while the backend takes all it is given (its connection is writable; a
    /// backend that stops reading makes it unwritable and the wait its own), or the backend's
    /// answer is held back because the client is not taking it (``pauseResponse()``). Before a
    /// connection is made, the wait is the backend's (connecting).
    private var waitingOnClient: Bool {
        if readPaused { return true }
        guard !requestEnded, !responseStarted, let connection else { return false }
        return connection.isWritable
    }

    private func clearWake() {
        wakeAt = .distantFuture
    }

    /// Counts a failure against an endpoint: metrics, the log, and passive health (see
    /// ``UpstreamFailure/Kind/marksUnhealthy``). The client's own timeout is not the endpoint's:
    /// the connection handler counts it under its code.
    private func record(_ failure: UpstreamFailure, endpoint: UpstreamEndpoint) {
        guard failure.kind.isUpstreams else { return }
        client.metrics.upstreamError(endpoint: endpoint.baseURL, kind: failure.kind)
        logger.warning(
            "upstream request failed",
            metadata: [
                "upstream": .string(endpoint.baseURL), "failure": .string(failure.kind.rawValue), "attempt": .stringConvertible(attempt),
            ])
        if failure.kind.marksUnhealthy { endpoint.markFailed(coolDownNanos: client.coolDownNanos) }
    }

    /// - Parameter counted: false when the failure was already recorded per endpoint.
    private func fail(_ failure: UpstreamFailure, counted: Bool = true) {
        guard !done else { return }
        done = true
        clearWake()
        if let connection {
            self.connection = nil
            connection.trip = nil
            connection.close()
            if counted { record(failure, endpoint: client.endpoints[connection.endpointIndex]) }
        } else if counted, attempt > 0 {
            // Still connecting (the total timeout): the endpoint being tried.
            record(failure, endpoint: client.endpoints[order[attempt - 1]])
        }
        delegate?.tripFailed(failure, responseStarted: responseStarted)
    }
}
