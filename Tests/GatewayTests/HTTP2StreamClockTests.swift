import NIOCore
import NIOEmbedded
import Testing

@testable import Gateway

/// The one timer of an HTTP/2 connection's streams, on virtual time.
@Suite("HTTP/2 stream clock")
struct HTTP2StreamClockTests {
    /// A stream that notes when it was told, and may ask again from inside.
    final class Stream: ClockedStream {
        let loop: EmbeddedEventLoop
        let clock: HTTP2StreamClock
        var told: [NIODeadline] = []
        /// Asked for when told (its next deadline), then cleared.
        var next: NIODeadline?

        init(_ loop: EmbeddedEventLoop, _ clock: HTTP2StreamClock) {
            self.loop = loop
            self.clock = clock
        }

        func clockDue() {
            told.append(loop.now)
            if let next {
                self.next = nil
                clock.wake(self, at: next)
            }
        }
    }

    @Test("each stream is told at its own deadline, earliest first, by one timer; a stream that asks again from inside is told again")
    func deadlines() {
        let loop = EmbeddedEventLoop()
        let clock = HTTP2StreamClock(eventLoop: loop)
        let start = loop.now
        let (early, late) = (Stream(loop, clock), Stream(loop, clock))
        clock.wake(late, at: start + .seconds(5))
        clock.wake(early, at: start + .seconds(3))
        early.next = start + .seconds(7)
        loop.advanceTime(by: .milliseconds(2999))
        #expect(early.told.isEmpty && late.told.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(early.told == [start + .seconds(3)] && late.told.isEmpty)
        loop.advanceTime(by: .seconds(2))
        #expect(late.told == [start + .seconds(5)])
        loop.advanceTime(by: .seconds(2))
        #expect(early.told == [start + .seconds(3), start + .seconds(7)])
        loop.advanceTime(by: .seconds(100))
        #expect(early.told.count == 2 && late.told.count == 1, "told once per deadline asked for")
    }

    @Test("a stream's later deadline replaces its earlier one; a stream forgotten, or a stopped clock, tells nobody")
    func forgetAndStop() {
        let loop = EmbeddedEventLoop()
        let clock = HTTP2StreamClock(eventLoop: loop)
        let start = loop.now
        let (moved, gone) = (Stream(loop, clock), Stream(loop, clock))
        clock.wake(moved, at: start + .seconds(1))
        clock.wake(moved, at: start + .seconds(4))
        clock.wake(gone, at: start + .seconds(2))
        clock.forget(gone)
        loop.advanceTime(by: .seconds(3))
        #expect(moved.told.isEmpty && gone.told.isEmpty)
        loop.advanceTime(by: .seconds(1))
        #expect(moved.told == [start + .seconds(4)])

        let stopped = Stream(loop, clock)
        clock.wake(stopped, at: loop.now + .seconds(1))
        clock.stop()
        loop.advanceTime(by: .seconds(10))
        #expect(stopped.told.isEmpty)
    }
}
