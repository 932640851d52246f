import NIOCore
import NIOHTTP1
import Testing

@testable import Gateway

/// The rules of a trip to the backends, alone: the endpoint order and retries, whose fault a
/// deadline is, the read clock, keep-alive. Times are plain values; no channel, no clock.
@Suite("Upstream trip rules")
struct UpstreamTripStateTests {
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    static func at(_ seconds: Double) -> NIODeadline {
        t0 + TimeAmount(seconds: seconds)
    }

    /// A trip over `order` with a read timeout of 1 s and a total of 10 s.
    static func trip(_ order: [Int] = [0], streamed: Bool = false) -> UpstreamTripState {
        UpstreamTripState(order: order, readTimeout: .seconds(1), totalTimeout: .seconds(10), requestEnded: !streamed)
    }

    struct Closed: Error {}

    @Test("endpoints are tried in order while connecting fails; after the last, the last failure — counted once per endpoint as it happened")
    func connectRetries() {
        var trip = Self.trip([2, 0, 1])
        let step1 = trip.start(at: Self.t0)
        #expect(step1 == .connect(endpoint: 2))
        let refused = UpstreamFailure(.connect, "connection refused or unreachable")
        let step2 = trip.connectFailed(refused)
        #expect(step2 == .connect(endpoint: 0))
        let step3 = trip.connectFailed(UpstreamFailure(.connect, "connect timeout"))
        #expect(step3 == .connect(endpoint: 1))
        let step4 = trip.connectFailed(refused)
        #expect(step4 == .fail(refused))
        #expect(trip.isDone && trip.wakeAt == .distantFuture)
    }

    @Test("no endpoint at all: the trip fails at once")
    func noEndpoint() {
        var trip = Self.trip([])
        let step5 = trip.start(at: Self.t0)
        #expect(step5 == .fail(UpstreamFailure(.connect, "no upstream configured")))
        #expect(trip.isDone)
    }

    @Test(
        "a head write failing on a pooled connection the backend closed, before the held parts went to it: the same endpoint again; anything else is broken, never sent twice"
    )
    func staleKeepAlive() {
        var stale = Self.trip([3, 4])
        _ = stale.start(at: Self.t0)
        _ = stale.attached()
        let step6 = stale.headWriteFailed(reused: true, closedChannel: true, error: Closed())
        #expect(step6 == .connect(endpoint: 3))
        #expect(stale.currentEndpoint == 3 && stale.phase == .connecting)

        // The parts followed the head: the request may be at the backend.
        var handedOver = Self.trip([3, 4])
        _ = handedOver.start(at: Self.t0)
        _ = handedOver.attached()
        let step7 = handedOver.handedOver()
        #expect(step7)
        let step8 = handedOver.headWriteFailed(reused: true, closedChannel: true, error: Closed())
        #expect(step8 == .fail(.broken(Closed())))
        #expect(handedOver.isDone)

        // A fresh connection, or an error other than a closed channel: broken too.
        for (reused, closed) in [(false, true), (true, false)] {
            var trip = Self.trip([3, 4])
            _ = trip.start(at: Self.t0)
            _ = trip.attached()
            let step9 = trip.headWriteFailed(reused: reused, closedChannel: closed, error: Closed())
            #expect(step9 == .fail(.broken(Closed())))
        }

        // The answer has begun: the connection's own events end the trip.
        var answered = Self.trip()
        _ = answered.start(at: Self.t0)
        _ = answered.attached()
        _ = answered.handedOver()
        let step10 = answered.responseHead(status: .ok, keepAlive: true)
        #expect(step10 == nil)
        let step11 = answered.headWriteFailed(reused: true, closedChannel: true, error: Closed())
        #expect(step11 == nil)
        #expect(!answered.isDone)
    }

    @Test("a protocol switch nobody asked for is an invalid answer")
    func switchingProtocols() {
        var trip = Self.trip()
        _ = trip.start(at: Self.t0)
        _ = trip.attached()
        let step12 = trip.responseHead(status: .switchingProtocols, keepAlive: true)
        #expect(step12 == .switchedProtocols)
        #expect(UpstreamFailure.switchedProtocols.kind == .invalidResponse)
    }

    @Test(
        "the connection goes back to the pool only after a complete exchange both ways that both sides kept alive",
        arguments: [
            (true, true, true, true), (false, true, true, false), (true, false, true, false), (true, true, false, false),
        ])
    func keepAlive(bodyEnded: Bool, backendKeepsAlive: Bool, clientKeepsAlive: Bool, pooled: Bool) {
        var trip = Self.trip(streamed: true)
        _ = trip.start(at: Self.t0)
        _ = trip.attached()
        let handedOver = trip.handedOver()
        #expect(!handedOver)
        if bodyEnded {
            let written = trip.clientBodyEnded()
            #expect(written)
        }
        let step13 = trip.responseHead(status: .ok, keepAlive: backendKeepsAlive)
        #expect(step13 == nil)
        let step14 = trip.responseEnded(requestKeepAlive: clientKeepsAlive)
        #expect(step14 == pooled)
        #expect(trip.isDone)
    }

    @Test("the first look is one read timeout after the start; while connecting the backend's silence is not a read timeout, the total is")
    func connectingClock() {
        var trip = Self.trip()
        let step15 = trip.start(at: Self.t0)
        #expect(step15 == .connect(endpoint: 0))
        #expect(trip.wakeAt == Self.at(1))
        let step16 = trip.wake(at: Self.at(1), connectionWritable: false)
        #expect(step16 == .next(Self.at(10)))
        let step17 = trip.wake(at: Self.at(10), connectionWritable: false)
        #expect(step17 == .fail(.totalTimeout))
    }

    @Test("the read clock runs from the request's end and each part read; silence past it is the backend's read timeout")
    func readClock() {
        var trip = Self.trip()
        _ = trip.start(at: Self.t0)
        _ = trip.attached()
        let step18 = trip.handedOver()
        #expect(step18)
        // Written at the start: the look already due at +1 s covers it.
        let step19 = trip.activity(at: Self.t0)
        #expect(step19 == nil)
        let step20 = trip.wake(at: Self.at(1), connectionWritable: true)
        #expect(step20 == .fail(.readTimeout))

        var answering = Self.trip()
        _ = answering.start(at: Self.t0)
        _ = answering.attached()
        _ = answering.handedOver()
        _ = answering.activity(at: Self.t0)
        _ = answering.responseHead(status: .ok, keepAlive: true)
        _ = answering.activity(at: Self.at(0.6))
        // Due at +1 s: the part read at +0.6 s moves the read deadline to +1.6 s.
        let step21 = answering.wake(at: Self.at(1), connectionWritable: true)
        #expect(step21 == .next(Self.at(1.6)))
        let step22 = answering.wake(at: Self.at(1.6), connectionWritable: true)
        #expect(step22 == .fail(.readTimeout))
    }

    @Test("an upload that outlasts the read timeout, then a silent backend: the read timeout runs from the upload's end, not the total")
    func readTimeoutAfterSlowUpload() {
        var trip = Self.trip(streamed: true)
        _ = trip.start(at: Self.t0)
        _ = trip.attached()
        let handedOver = trip.handedOver()
        #expect(!handedOver)
        // The backend takes what it is given: the client's turn, the look moves to the total.
        let step23 = trip.wake(at: Self.at(1), connectionWritable: true)
        #expect(step23 == .next(Self.at(10)))
        let step24 = trip.clientBodyEnded()
        #expect(step24)
        let step25 = trip.activity(at: Self.at(1.5))
        #expect(step25 == Self.at(2.5))
        let step26 = trip.wake(at: Self.at(2.5), connectionWritable: true)
        #expect(step26 == .fail(.readTimeout))
    }

    @Test("past the total deadline the fault is the client's while it uploads to a backend that keeps up, the backend's when it does not")
    func slowUploadBlame() {
        for (writable, failure) in [(true, UpstreamFailure.clientTooSlow), (false, .totalTimeout)] {
            var trip = Self.trip(streamed: true)
            _ = trip.start(at: Self.t0)
            _ = trip.attached()
            _ = trip.handedOver()
            let step27 = trip.wake(at: Self.at(1), connectionWritable: writable)
            #expect(step27 == .next(Self.at(10)))
            let step28 = trip.wake(at: Self.at(10), connectionWritable: writable)
            #expect(step28 == .fail(failure))
        }
        #expect(UpstreamFailure.clientTooSlow.kind == .clientTimeout)
    }

    @Test(
        "an answer the client does not take: no read timeout while it is held back, the client's timeout at the total; taken again, the read clock restarts"
    )
    func slowReader() {
        var trip = Self.trip()
        _ = trip.start(at: Self.t0)
        _ = trip.attached()
        _ = trip.handedOver()
        _ = trip.activity(at: Self.t0)
        _ = trip.responseHead(status: .ok, keepAlive: true)
        trip.pauseResponse()
        #expect(trip.waitingOnClient(connectionWritable: false))
        let step29 = trip.wake(at: Self.at(1), connectionWritable: false)
        #expect(step29 == .next(Self.at(10)))
        // Resumed at +5 s: the backend could not be heard meanwhile; its clock starts now.
        let step30 = trip.resumeResponse(at: Self.at(5))
        #expect(step30 == Self.at(6))
        let step31 = trip.wake(at: Self.at(6), connectionWritable: false)
        #expect(step31 == .fail(.readTimeout))

        var neverTaken = Self.trip()
        _ = neverTaken.start(at: Self.t0)
        _ = neverTaken.attached()
        _ = neverTaken.handedOver()
        _ = neverTaken.responseHead(status: .ok, keepAlive: true)
        neverTaken.pauseResponse()
        _ = neverTaken.wake(at: Self.at(1), connectionWritable: true)
        let step32 = neverTaken.wake(at: Self.at(10), connectionWritable: true)
        #expect(step32 == .fail(.clientTooSlow))
    }

    @Test("a cancelled or finished trip has nothing due; a look before its time changes nothing")
    func finished() {
        var trip = Self.trip([5])
        _ = trip.start(at: Self.t0)
        let step33 = trip.finish()
        #expect(step33 == 5, "still connecting: the endpoint being tried is the one to blame")
        #expect(trip.isDone && trip.wakeAt == .distantFuture)

        var attached = Self.trip([5])
        _ = attached.start(at: Self.t0)
        _ = attached.attached()
        let step34 = attached.finish()
        #expect(step34 == nil, "attached: the trip blames its connection's endpoint")
    }

    @Test("an event the phase does not allow, in a release build: the trip fails as broken, the fault reported once")
    func faults() {
        var trip = UpstreamTripState(order: [0], readTimeout: .seconds(1), totalTimeout: .seconds(10), requestEnded: true, trapsOnFault: false)
        let answer = trip.responseHead(status: .ok, keepAlive: true)
        #expect(answer?.kind == .broken)
        #expect(trip.takeFault()?.machine == .trip)
        #expect(trip.takeFault() == nil)
        #expect(trip.attached() == nil)
        let attachedTwice = trip.attached()
        #expect(attachedTwice?.kind == .broken && trip.takeFault()?.event.hasPrefix("a connection attached when not connecting") == true)
    }
}
