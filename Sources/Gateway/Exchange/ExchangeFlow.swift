import Dispatch
import NIOCore
import NIOHTTP1
import SAMLVerification

/// Who an ``ExchangeFlow`` reports its one decision to (the client connection, on its event loop).
protocol ExchangeFlowDelegate: AnyObject {
    func exchange(_ flow: ExchangeFlow, decided decision: ExchangeFlow.Decision)
}

/// One token exchange, from its admitted head to its one ``Decision``: its body collected,
/// verified and encoded on a worker (``ExchangeProcessor``), a shared throttle's and a shared
/// replay store's answers awaited, an out-of-turn metadata fetch made when a key is not trusted —
/// then forwarded (the head and body for the backend) or refused, reported once to whoever
/// started it (``whenDecided(tell:)``). It knows nothing of the connection.
///
/// Runs on the connection's event loop but for the worker's part. Its phases are a value
/// (``ExchangeState``), which says what comes next at each step; the flow carries it out. The
/// connection cancels it (``cancel()``) when the request ends otherwise — a client gone, a
/// timeout, a refusal — and each return to the loop stops there: nothing is recorded or
/// forwarded for it.
final class ExchangeFlow {
    /// How the exchange ends.
    enum Decision {
        /// Verified (or reported): this head and body go to the backend.
        case forward(HTTPRequestHead, body: ByteBuffer)
        case refuse(GatewayError)
    }

    private let request: InFlightRequest
    private let core: GatewayCore
    /// Where what each step found goes (``RequestFact``): the flow counts and logs nothing itself.
    private let observer: RequestObserver
    private let eventLoop: any EventLoop
    /// The client's address, for `X-Forwarded-For`.
    private let peer: SocketAddress?
    /// Whom the decision goes to (the connection answering the request); weak, as a trip's delegate.
    private weak var delegate: (any ExchangeFlowDelegate)?
    /// Where the exchange is (``ExchangeState``): the flow carries out what it returns.
    private var state = ExchangeState()
    private let route: ExchangeRoute
    /// One trust snapshot for the whole request, so a reload cannot split it: the v2 partner
    /// status was resolved against it, and the worker verifies against it. Replaced only by the
    /// reload an out-of-turn metadata fetch made (``refetched(_:refusal:asked:)``).
    private var store: TrustStore
    /// With `throttle-store: shared`: Redis's answer for this client (the wait until its next
    /// token, `nil` to go on), awaited before the body goes to a worker.
    var throttleVerdict: EventLoopFuture<Double?>?
    /// The exchange path, in its canonical spelling: where the verified body is forwarded.
    private let path: String
    private var body = ByteBuffer()

    /// Admits the exchange on its head (``ExchangeAdmission``; for v2, the MVPD from the partner
    /// status): nothing is read of a body refused here.
    init(
        request: InFlightRequest, target: RequestTarget, partner: Bool, peer: SocketAddress?, eventLoop: any EventLoop, core: GatewayCore
    )
        throws(GatewayError)
    {
        let head = request.head
        try ExchangeAdmission.check(head.headers, target: target, partner: partner)
        let store = core.trustStore.current
        let observer = RequestObserver(core: core)
        route = partner ? try ExchangeAdmission.partnerRoute(head.headers, target: target, store: store, observer: observer) : .v1
        let limit = core.configuration.bodyLimit
        if let length = head.contentLength, length > limit {
            throw GatewayError.bodyTooLarge(limit)
        }
        self.store = store
        self.request = request
        self.peer = peer
        self.eventLoop = eventLoop
        self.core = core
        self.observer = observer
        path = target.path
    }

    /// `delegate` is told once, on the event loop, when the exchange is decided (not after ``cancel()``).
    func whenDecided(tell delegate: any ExchangeFlowDelegate) {
        self.delegate = delegate
    }

    /// The request ended otherwise: the flow stops at its next step, and decides nothing.
    func cancel() {
        state.cancel()
        delegate = nil
    }

    private func decide(_ decision: Decision) {
        guard state.decide(), let delegate else { return }
        self.delegate = nil
        delegate.exchange(self, decided: decision)
    }

    /// A part of the body; refused once the whole would pass `body-limit`.
    func receive(_ part: ByteBuffer) throws(GatewayError) {
        let limit = core.configuration.bodyLimit
        guard body.readableBytes + part.readableBytes <= limit else { throw GatewayError.bodyTooLarge(limit) }
        if body.readableBytes == 0 {
            body = part
        } else {
            var part = part
            body.writeBuffer(&part)
        }
    }

    /// An event the exchange's state did not allow (``StateFault``): reported once.
    private func reportFault() {
        if let fault = state.takeFault() { observer.note(.stateFault(fault), for: request) }
    }

    /// The body is complete: the shared throttle's answer awaited, if any, then verified.
    func bodyComplete() {
        let next = state.bodyComplete(awaitingThrottle: throttleVerdict != nil)
        reportFault()
        switch next {
        case .awaitThrottle: awaitThrottle()
        case .verify: verify()
        case .refuse: decide(.refuse(.unreadableBody))
        }
    }

    private func awaitThrottle() {
        guard let verdict = throttleVerdict else { return }
        throttleVerdict = nil
        verdict.assumeIsolated().whenSuccess { wait in
            guard self.state.isLive else { return }
            guard let wait else {
                let passed = self.state.throttlePassed()
                self.reportFault()
                if passed { self.verify() }
                return
            }
            self.observer.note(.throttled, for: self.request)
            self.decide(.refuse(.throttled(wait: wait)))
        }
    }

    /// Verified and encoded on a worker, then ``verified(_:queued:began:ended:)`` on this loop.
    /// The body is kept (a reference, not a copy) for a second verification after the trust
    /// store changed.
    private func verify() {
        let eventLoop = self.eventLoop
        let queued = DispatchTime.now().uptimeNanoseconds
        let processor = core.processor
        let (body, route, store) = (body, route, store)
        let flow = NIOLoopBound(self, eventLoop: eventLoop)
        let refused = core.verification.enqueue {
            let began = DispatchTime.now().uptimeNanoseconds
            let outcome = processor.prepare(body: body, route: route, store: store)
            let ended = DispatchTime.now().uptimeNanoseconds
            eventLoop.execute { flow.value.verified(outcome, queued: queued, began: began, ended: ended) }
        }
        if let refused { decide(.refuse(.overloaded(shuttingDown: refused == .stopped))) }
    }

    /// Back from the worker: refused, or recorded (when a shared replay store is in use) and
    /// forwarded. `queued`, `began` and `ended`: when the body was queued for a worker, and when
    /// the worker took it up and was done with it.
    private func verified(_ verdict: ExchangeVerdict, queued: UInt64, began: UInt64, ended: UInt64) {
        guard state.isLive else { return }
        observer.note(.verified(verdict, queued: queued, began: began, ended: ended), for: request)
        switch verdict {
        case .refuse(let error, let mvpd):
            // Refused only for a key not trusted, from an MVPD whose metadata is fetched: maybe
            // a rotation the next scheduled refresh would bring. Fetched now, verified again if
            // the copy changed.
            if error.code == .keyNotTrusted, let refetch = core.metadataRefetch, let mvpd,
                let source = store.provider(for: mvpd)?.metadataSource
            {
                switch state.keyNotTrusted(refetchable: true, storeChanged: core.trustStore.current !== store) {
                case .verifyAgain:
                    // The store changed since this request's head: that copy first, no fetch.
                    store = core.trustStore.current
                    verify()
                    return
                case .refetch:
                    let (asked, loop) = (DispatchTime.now().uptimeNanoseconds, eventLoop)
                    let flow = NIOLoopBound(self, eventLoop: loop)
                    refetch.request(source) { result in
                        loop.execute { flow.value.refetched(result, refusal: error, mvpd: mvpd, asked: asked) }
                    }
                    return
                case .refuse:
                    break
                }
            }
            refuse(error, mvpd: mvpd)
        case .report(let prepared, let wouldRefuse):
            reported(wouldRefuse, prepared: prepared)
        case .forward(let prepared):
            observer.note(.prepared(prepared), for: request)
            if let shared = core.sharedReplayStore, let claim = prepared.replayClaim {
                state.recording()
                reportFault()
                record(claim, in: shared, then: prepared)
            } else {
                forward(prepared)
            }
        }
    }

    /// Report-only (the gateway's `mode`, or the MVPD's `mode` file): what enforcing would have
    /// refused is forwarded, and reported.
    private func reported(_ error: GatewayError, prepared: PreparedExchange) {
        guard state.isLive else { return }
        observer.note(.wouldRefuse(error, mvpd: prepared.mvpd), for: request)
        forward(prepared)
    }

    /// Back from an out-of-turn metadata fetch: verified again against the reloaded store when
    /// the copy changed, else refused as the first verification decided.
    private func refetched(_ result: MetadataRefreshResult, refusal: GatewayError, mvpd: String, asked: UInt64) {
        guard state.isLive else { return }
        observer.note(.refetched(result, asked: asked), for: request)
        // A newer store — this fetch's, or one a scheduled refresh or another request's fetch
        // loaded meanwhile — may trust the key: verified again against it.
        let current = core.trustStore.current
        let again = state.refetched(storeChanged: result == .updated || current !== store)
        reportFault()
        guard again else {
            refuse(refusal, mvpd: mvpd)
            return
        }
        store = current
        verify()
    }

    /// The shared replay store, asked from this loop: forwarded only once recorded.
    private func record(_ claim: ReplayClaim, in shared: SharedReplayStore, then prepared: PreparedExchange) {
        let asked = DispatchTime.now().uptimeNanoseconds
        shared.admit(claim, digest: prepared.assertionHash, on: eventLoop).assumeIsolated().whenSuccess { refusal in
            guard self.state.isLive else { return }
            self.observer.note(.replayAnswered(refusal: refusal, asked: asked), for: self.request)
            guard let refusal else { return self.forward(prepared) }
            switch self.core.processor.verdict(for: refusal, mvpd: prepared.mvpd, store: self.store, reported: { prepared }) {
            case .report(let prepared, let wouldRefuse): self.reported(wouldRefuse, prepared: prepared)
            case .refuse(let error, let mvpd): self.refuse(error, mvpd: mvpd)
            case .forward(let prepared): self.forward(prepared)
            }
        }
    }

    /// The verified body to the backend, under the client's headers.
    private func forward(_ prepared: PreparedExchange) {
        guard state.isLive else { return }
        // The client's body was kept for a second verification only: not for the trip.
        body = ByteBuffer()
        observer.note(.exchangeDecided(mvpd: prepared.mvpd, forwarded: true, refusal: nil), for: request)
        let head = UpstreamRequestHead.exchange(
            request, path: path, bodyLength: prepared.upstreamBody.readableBytes, peer: peer, core: core, observer: observer)
        decide(.forward(head, body: prepared.upstreamBody))
    }

    /// - Parameter mvpd: the trust store's MVPD the exchange was for, when known.
    private func refuse(_ error: GatewayError, mvpd: String?) {
        body = ByteBuffer()
        observer.note(.exchangeDecided(mvpd: mvpd, forwarded: false, refusal: error), for: request)
        decide(.refuse(error))
    }
}
