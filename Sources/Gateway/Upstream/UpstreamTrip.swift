import Dispatch
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

/// One request's way to a backend and back: takes a pooled connection or opens one, writes the
/// request — streamed as the client sends it, or from memory — relays the answer to its
/// delegate, and hands the connection back to the pool when the exchange completed cleanly. It
/// carries out what its rules decide (``UpstreamTripState``: the endpoint order, retries, whose
/// fault a deadline is, keep-alive); of its own it keeps only what it carries: the connection,
/// the parts not yet written, and whether its starter flushes the first write.
///
/// Retries: only when nothing was sent (the connection could not be made, or a pooled connection
/// turned out closed before the request went out); then the next endpoint gets it. The body parts
/// that arrive before a connection is ready are held, up to ``pendingLimit`` (the client is paused
/// beyond it), so a retry never lacks what the client already sent.
///
/// Timeouts: `read` from the end of the request to the answer and between its parts, `total`
/// for the whole trip (answer included); a client that uploads, or reads the answer, more slowly
/// than the deadline allows is the client's timeout, never counted against the backend. The trip
/// has no timer: its delegate's — the client connection's one timer — looks at ``wakeAt``.
final class UpstreamTrip {
    /// Body bytes held while no connection is ready before the client is paused.
    static let pendingLimit = 256 * 1024

    private let client: UpstreamClient
    private let pool: UpstreamConnectionPool
    private let head: HTTPRequestHead
    private var state: UpstreamTripState
    private weak var delegate: (any UpstreamTripDelegate)?
    /// Where the backend's answers and failures are reported (the trip counts nothing itself).
    private let observer: RequestObserver

    private var connection: UpstreamConnection?
    /// Parts not yet written: everything until a connection is ready.
    private var pending: [HTTPClientRequestPart] = []
    private var pendingBytes = 0
    /// When the trip began (`DispatchTime` nanoseconds): the upstream latency metric's start.
    private var started: UInt64 = 0
    /// Within ``start(flushingLater:)``: a connection attached now is flushed by the caller.
    private var holdingFlush = false

    /// - Parameters:
    ///   - head: method, path (without the endpoint's prefix) and headers; `Host` is added per endpoint.
    ///   - body: the whole body when it is in memory (then ``send(_:)`` and ``end()`` are not used).
    init(
        client: UpstreamClient, pool: UpstreamConnectionPool, head: HTTPRequestHead, body: ByteBuffer?,
        delegate: any UpstreamTripDelegate, observer: RequestObserver
    ) {
        self.client = client
        self.pool = pool
        self.head = head
        state = UpstreamTripState(
            order: client.pickOrder(), readTimeout: client.readTimeout, totalTimeout: client.totalTimeout, requestEnded: body != nil)
        self.delegate = delegate
        self.observer = observer
        if let body {
            if body.readableBytes > 0 { pending.append(.body(.byteBuffer(body))) }
            pending.append(.end(nil))
        }
    }

    /// When the trip next needs a look (``wake(now:)``); `distantFuture` once it is done.
    var wakeAt: NIODeadline { state.wakeAt }

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
        // The starter reads ``wakeAt`` once this returns: the delegate is not called for it.
        let next = state.start(at: pool.eventLoop.now)
        holdingFlush = flushingLater
        perform(next)
        holdingFlush = false
    }

    /// A part of the client's streamed body; written out at the next ``flush()``.
    func send(_ part: ByteBuffer) {
        guard !state.isDone else { return }
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
        guard !state.isDone else { return }
        connection?.flush()
    }

    /// The end of the client's streamed body.
    func end() {
        guard !state.isDone else { return }
        if state.clientBodyEnded(), let connection {
            connection.write(.end(nil), promise: nil)
            connection.flush()
            noteActivity()
        } else {
            pending.append(.end(nil))
        }
    }

    /// The client cannot take more of the answer for now / again.
    func pauseResponse() {
        state.pauseResponse()
        connection?.pauseReading()
    }

    func resumeResponse() {
        if let look = state.resumeResponse(at: pool.eventLoop.now) { delegate?.tripWake(at: look) }
        connection?.resumeReading()
    }

    /// The client went away or its body broke: drop the connection, report nothing.
    func cancel() {
        guard !state.isDone else { return }
        _ = state.finish()
        connection?.trip = nil
        connection?.close()
        connection = nil
    }

    // MARK: connecting

    private func perform(_ next: UpstreamTripState.Next) {
        switch next {
        case .connect(let index): connect(to: index)
        // Every endpoint was tried: each failure was counted as it happened.
        case .fail(let failure): delegate?.tripFailed(failure, responseStarted: false)
        }
    }

    private func connect(to index: Int) {
        if let pooled = pool.takeIdle(index) {
            attach(pooled)
            return
        }
        pool.connect(index) { [self] result in
            switch result {
            case .success(let opened):
                if state.isDone {
                    opened.close()
                } else {
                    attach(opened)
                }
            case .failure(let failure):
                guard !state.isDone else { return }
                record(failure, endpoint: index)
                let next = state.connectFailed(failure)
                reportFault()
                perform(next)
            }
        }
    }

    private func attach(_ opened: UpstreamConnection) {
        connection = opened
        opened.trip = self
        if let failure = state.attached() {
            reportFault()
            return fail(failure)
        }
        if state.readPaused { opened.pauseReading() }
        let endpoint = client.endpoints[opened.endpointIndex]
        // A pooled connection closed by the backend between requests fails this first write
        // before any byte left: then nothing was sent, and the next connection may have it.
        let headWritten = pool.eventLoop.makePromise(of: Void.self)
        opened.writeHead(head, prefix: endpoint.pathPrefix, authority: endpoint.authority, promise: headWritten)
        headWritten.futureResult.assumeIsolated().whenFailure { [weak self, weak opened] error in
            guard let self, let opened, connection === opened,
                let next = state.headWriteFailed(reused: opened.reused, closedChannel: Self.isClosedChannel(error), error: error)
            else { return }
            opened.trip = nil
            connection = nil
            if case .fail(let failure) = next {
                opened.close()
                record(failure, endpoint: opened.endpointIndex)
                delegate?.tripFailed(failure, responseStarted: state.responseStarted)
            } else {
                perform(next)
            }
        }
        // Failed at once on a closed pooled connection: the next attempt has taken over.
        guard connection === opened else { return }
        for part in pending { opened.write(part, promise: nil) }
        pending = []
        pendingBytes = 0
        let requestWritten = state.handedOver()
        if !holdingFlush { opened.flush() }
        // The read timeout runs from the end of the request (an upload may take longer than it).
        if requestWritten { noteActivity() }
        if !state.requestEnded && opened.isWritable { delegate?.tripWantsBody() }
    }

    private static func isClosedChannel(_ error: any Error) -> Bool {
        if let channel = error as? ChannelError, channel == .ioOnClosedChannel || channel == .alreadyClosed { return true }
        return false
    }

    // MARK: the answer (called by the connection)

    func upstreamHead(_ head: HTTPResponseHead) {
        guard !state.isDone else { return }
        noteActivity()
        if let failure = state.responseHead(status: head.status, keepAlive: head.isKeepAlive) {
            reportFault()
            return fail(failure)
        }
        let endpoint = client.endpoints[connection?.endpointIndex ?? 0]
        endpoint.markHealthy()
        observer.upstreamAnswered(endpoint: endpoint, nanos: DispatchTime.now().uptimeNanoseconds - started)
        delegate?.tripResponded(head)
    }

    func upstreamBody(_ part: ByteBuffer) {
        guard !state.isDone else { return }
        noteActivity()
        delegate?.tripBody(part)
    }

    func upstreamEnd() {
        guard !state.isDone else { return }
        let reusable = state.responseEnded(requestKeepAlive: head.isKeepAlive)
        if let connection {
            self.connection = nil
            if reusable {
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
        guard !state.isDone else { return }
        delegate?.tripFlush()
    }

    func upstreamWritable() {
        guard !state.isDone, !state.requestEnded else { return }
        delegate?.tripWantsBody()
    }

    func upstreamClosed() {
        guard !state.isDone else { return }
        fail(.closed)
    }

    func upstreamError(_ error: any Error) {
        guard !state.isDone else { return }
        fail(.broken(error))
    }

    // MARK: clocks and failing

    /// Something was written to or read from the backend: its read clock starts again (the
    /// delegate's timer is moved earlier only when the look was due later).
    private func noteActivity() {
        if let look = state.activity(at: pool.eventLoop.now) { delegate?.tripWake(at: look) }
    }

    /// An event the trip's state did not allow (``StateFault``): reported once.
    private func reportFault() {
        if let fault = state.takeFault() { observer.stateFault(fault, request: nil) }
    }

    /// The look at ``wakeAt``: fails the trip whose deadline passed, else sets the next look.
    func wake(now: NIODeadline) {
        let look = state.wake(at: now, connectionWritable: connection?.isWritable ?? false)
        reportFault()
        switch look {
        case .next(let look): if look != .distantFuture { delegate?.tripWake(at: look) }
        case .fail(let failure): fail(failure)
        }
    }

    /// Holds a failure against an endpoint: reported, and its passive health (see
    /// ``UpstreamFailure/Kind/marksUnhealthy``). The client's own timeout is not the endpoint's:
    /// the connection handler counts it under its code.
    private func record(_ failure: UpstreamFailure, endpoint index: Int) {
        guard failure.kind.isUpstreams else { return }
        let endpoint = client.endpoints[index]
        observer.upstreamFailed(failure, endpoint: endpoint, attempt: state.attempt)
        if failure.kind.marksUnhealthy { endpoint.markFailed(coolDownNanos: client.coolDownNanos) }
    }

    /// Ends the trip with `failure`, counted against the endpoint that caused it.
    private func fail(_ failure: UpstreamFailure) {
        guard !state.isDone else { return }
        let connecting = state.finish()
        if let connection {
            self.connection = nil
            connection.trip = nil
            connection.close()
            record(failure, endpoint: connection.endpointIndex)
        } else if let connecting {
            // Still connecting (the total timeout): the endpoint being tried.
            record(failure, endpoint: connecting)
        }
        delegate?.tripFailed(failure, responseStarted: state.responseStarted)
    }
}
