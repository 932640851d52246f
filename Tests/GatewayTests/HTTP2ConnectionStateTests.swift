import NIOHTTP2
import Testing

@testable import Gateway

/// The HTTP/2 connection guard's rules alone: the idle clock, the half-close, the drain's bound,
/// errors, the unread-answers close.
@Suite("HTTP/2 connection state")
struct HTTP2ConnectionStateTests {
    @Test("streams keep the idle clock off; the last to close starts it; the idle clock's end is a GOAWAY naming the last stream taken")
    func idleClock() {
        var state = HTTP2ConnectionState()
        #expect(state.added() == .armIdle)
        #expect(state.streamCreated(HTTP2StreamID(3)) == .cancelIdle)
        #expect(state.streamCreated(HTTP2StreamID(1)) == .cancelIdle)
        #expect(state.streamClosed() == .none)
        #expect(state.streamClosed() == .armIdle)
        #expect(state.idleExpired() == .goAwayAndClose(.noError, lastStream: HTTP2StreamID(3)))
        #expect(state.closing)
        #expect(state.idleExpired() == .none, "once")
    }

    @Test(
        "a half-close: with no stream open the connection closes now; else the streams are answered within the drain's bound, the last one's end closes it"
    )
    func halfClose() {
        var idle = HTTP2ConnectionState()
        idle.clientInputClosed()
        #expect(idle.unfinishedStreamsEnded() == .close)

        var busy = HTTP2ConnectionState()
        _ = busy.streamCreated(HTTP2StreamID(1))
        _ = busy.streamCreated(HTTP2StreamID(3))
        busy.clientInputClosed()
        // Stream 3's request was not whole: ended with the half-close.
        #expect(busy.streamClosed() == .none)
        #expect(busy.unfinishedStreamsEnded() == .boundDrain(quiesce: false))
        #expect(busy.streamClosed() == .closeNextTick)
    }

    @Test("the drain's bound is set once, whether a shutdown, a half-close or a stream over the limit asks; a stream over the limit always quiesces")
    func drainBound() {
        var state = HTTP2ConnectionState()
        _ = state.streamCreated(HTTP2StreamID(1))
        #expect(state.quiesce() == .boundDrain(quiesce: false))
        #expect(state.quiesce() == .none)
        #expect(state.failed(.connection(.streamLimit)) == .quiesce)
        #expect(!state.closing, "draining: the streams taken are answered")

        var limit = HTTP2ConnectionState()
        #expect(limit.failed(.connection(.streamLimit)) == .boundDrain(quiesce: true))
    }

    @Test("any other connection error, or a broken connection, closes on the next tick, once; unread answers close with ENHANCE_YOUR_CALM")
    func errors() {
        for failure in [HTTP2ConnectionState.Failure.broken, .connection(.rapidReset), .connection(.protocolError)] {
            var state = HTTP2ConnectionState()
            #expect(state.failed(failure) == .closeNextTick)
            #expect(state.failed(failure) == .none)
            #expect(state.budgetStalled() == .none)
        }
        var stalled = HTTP2ConnectionState()
        _ = stalled.streamCreated(HTTP2StreamID(5))
        #expect(stalled.budgetStalled() == .goAwayAndClose(.enhanceYourCalm, lastStream: HTTP2StreamID(5)))
        #expect(stalled.budgetStalled() == .none)
    }
}
