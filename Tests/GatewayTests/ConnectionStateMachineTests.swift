import NIOCore
import NIOHTTP1
import Testing

@testable import Gateway

/// Each transition of a client connection's state machine, with no channel: what a request's
/// body and answer do to the state, what waits behind it, when reads are held, half-close,
/// quiesce, parser failures and the client's clocks.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    static let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz"))

    static func machine(idle: Int64 = 10, header: Int64 = 5) -> ConnectionStateMachine {
        ConnectionStateMachine(deadlines: ClientDeadlines(idle: .seconds(idle), header: .seconds(header), now: start))
    }

    @Test("a keep-alive request: receiving → awaiting its answer → answering → idle, the request complete")
    func keepAlive() {
        var machine = Self.machine()
        #expect(machine.read(Self.head, writable: true) == .deliver)
        machine.headReceived(keepAlive: true)
        #expect(machine.state == .receiving(closeAfterAnswer: false) && machine.hasRequest && !machine.bodyEnded)
        #expect(machine.endOfBody() == false)
        #expect(machine.state == .awaitingAnswer(closeAfterAnswer: false))
        machine.startAnswer()
        #expect(machine.state == .answering(closeAfterAnswer: false) && machine.answerStarted)
        #expect(machine.answerEnded(writable: true) == .end(complete: true, resumeReads: false))
        #expect(machine.state == .idle && !machine.hasRequest)
    }

    @Test("no keep-alive, or closeAfterAnswer on the way (an upgrade, a refusal with a body left unread): the answer ends the connection")
    func closing() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: false)
        #expect(machine.closesAfterAnswer)
        _ = machine.endOfBody()
        machine.startAnswer()
        #expect(machine.answerEnded(writable: true) == .endAndClose)
        #expect(machine.state == .closing && machine.isClosing)
        // Whatever the client sends after a closing answer is never taken up.
        #expect(machine.read(Self.head, writable: true) == .drop)

        var upgraded = Self.machine()
        upgraded.headReceived(keepAlive: true)
        upgraded.closeAfterAnswer()
        #expect(upgraded.state == .receiving(closeAfterAnswer: true))
        upgraded.startAnswer()
        #expect(upgraded.state == .answeringWhileReceiving(closeAfterAnswer: true))
        #expect(upgraded.answerEnded(writable: true) == .endAndClose)
    }

    @Test("an answer before the body ends (a refusal, a backend answering early): the rest of the body is drained, then the request is complete")
    func earlyAnswer() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        machine.startAnswer()
        #expect(machine.state == .answeringWhileReceiving(closeAfterAnswer: false))
        #expect(machine.answerEnded(writable: true) == .end(complete: false, resumeReads: false))
        #expect(machine.state == .drainingBody && machine.answerEnded && machine.hasRequest)
        // Body parts of the drained request are still delivered (to be dropped).
        #expect(machine.read(.body(ByteBuffer(string: "x")), writable: true) == .deliver)
        #expect(machine.endOfBody() == true)
        #expect(machine.state == .idle)
    }

    @Test("pipelining: a request behind one awaiting its answer waits, reads are held, and it is taken up in order once the answer is written")
    func pipelining() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        _ = machine.endOfBody()
        #expect(machine.read(Self.head, writable: true) == .hold)
        #expect(machine.read(.end(nil), writable: true) == .hold)
        #expect(machine.hasQueued && machine.reads.isPaused)
        #expect(machine.readRequested() == false, "a read asked for while held is kept")
        // Nothing is taken up while the request in flight awaits its answer.
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.nextQueued(writable: true) == nil)
        #expect(machine.endTakeUp() == false)

        machine.startAnswer()
        // The answer's end does not resume reads: what waited is taken up first.
        #expect(machine.answerEnded(writable: true) == .end(complete: true, resumeReads: false))
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.beginTakeUp(at: Self.start) == false, "a loop already running further up the stack goes on; no nested one")
        guard case .part(.head) = machine.nextQueued(writable: true) else {
            Issue.record("the pipelined head comes first")
            return
        }
        machine.headReceived(keepAlive: true)
        guard case .part(.end) = machine.nextQueued(writable: true) else {
            Issue.record("then its end")
            return
        }
        #expect(machine.endOfBody() == false)
        #expect(machine.nextQueued(writable: true) == nil)
        // The queue is empty: reads resume, and the read held earlier is issued now.
        #expect(machine.endTakeUp() == true)
        #expect(!machine.reads.isPaused)
    }

    @Test("a closing answer drops what was pipelined behind it")
    func pipelinedAfterClosing() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: false)
        _ = machine.endOfBody()
        #expect(machine.read(Self.head, writable: true) == .drop)
        #expect(!machine.hasQueued)
    }

    @Test("a client that does not take its answers: no request is begun until the channel is writable again")
    func unreadAnswers() {
        var machine = Self.machine()
        #expect(machine.read(Self.head, writable: false) == .hold)
        #expect(machine.reads.isPaused)
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.nextQueued(writable: false) == nil)
        #expect(machine.endTakeUp() == false, "reads stay held while the head waits")
        let next = machine.writable()
        #expect(next.takeUp && !next.read)
        // Writable with nothing queued: a read is due only when one was held.
        var idle = Self.machine()
        let nothing = idle.writable()
        #expect(!nothing.takeUp && !nothing.read)
        // An answer ending while the client is not writable holds reads.
        idle.headReceived(keepAlive: true)
        _ = idle.endOfBody()
        idle.startAnswer()
        #expect(idle.answerEnded(writable: false) == .end(complete: true, resumeReads: false))
        #expect(idle.reads.isPaused)
        #expect(idle.readRequested() == false)
        let resumed = idle.writable()
        #expect(!resumed.takeUp && resumed.read, "the held read is issued once the client takes its answers")
    }

    @Test("half-close: an idle connection closes at once; one with a request closes after its answer; one with pipelined parts after them")
    func halfClose() {
        var idle = Self.machine()
        #expect(idle.clientInputClosed() == .close)
        #expect(idle.isClosing)

        var busy = Self.machine()
        busy.headReceived(keepAlive: true)
        #expect(busy.clientInputClosed() == .none)
        _ = busy.endOfBody()
        busy.startAnswer()
        #expect(busy.answerEnded(writable: true) == .endAndClose, "a half-closed client gets its answer, then the close")

        var pipelined = Self.machine()
        pipelined.headReceived(keepAlive: true)
        _ = pipelined.endOfBody()
        #expect(pipelined.read(Self.head, writable: true) == .hold)
        #expect(pipelined.clientInputClosed() == .none)
        #expect(!pipelined.inputClosed, "the half-close waits behind the queued request")
        pipelined.startAnswer()
        _ = pipelined.answerEnded(writable: true)
        #expect(pipelined.beginTakeUp(at: Self.start) == true)
        guard case .part(.head) = pipelined.nextQueued(writable: true) else {
            Issue.record("the queued head comes before the half-close")
            return
        }
        pipelined.headReceived(keepAlive: true)
        // Its body is still arriving (from what was read before the half-close): the half-close is next.
        guard case .inputClosed = pipelined.nextQueued(writable: true) else {
            Issue.record("the half-close follows the queued head")
            return
        }
        #expect(pipelined.queuedInputClosed() == .none, "a request is in flight: closed after its answer")
        #expect(pipelined.inputClosed)
        _ = pipelined.endOfBody()
        pipelined.startAnswer()
        #expect(pipelined.answerEnded(writable: true) == .endAndClose)
    }

    @Test("quiesce: idle or draining connections close now; a request in flight is answered with Connection: close; queued ones are dropped")
    func quiesce() {
        var idle = Self.machine()
        #expect(idle.quiesce() == .close)

        var busy = Self.machine()
        busy.headReceived(keepAlive: true)
        _ = busy.endOfBody()
        #expect(busy.read(Self.head, writable: true) == .hold)
        #expect(busy.quiesce() == .none)
        #expect(busy.closesAfterAnswer && !busy.hasQueued)

        var draining = Self.machine()
        draining.headReceived(keepAlive: true)
        draining.startAnswer()
        _ = draining.answerEnded(writable: true)
        #expect(draining.quiesce() == .close)
    }

    @Test("parser failures: handled now when idle or mid-body, queued behind a request awaiting its answer, ignored once closing")
    func parserFailures() {
        var idle = Self.machine()
        #expect(idle.parserFailed(.invalidHeaderToken) == true)
        idle.closed()
        #expect(idle.parserFailed(.invalidHeaderToken) == false)

        var midBody = Self.machine()
        midBody.headReceived(keepAlive: true)
        #expect(midBody.parserFailed(.invalidChunkSize) == true)

        var waiting = Self.machine()
        waiting.headReceived(keepAlive: true)
        _ = waiting.endOfBody()
        #expect(waiting.parserFailed(.invalidHeaderToken) == false)
        #expect(waiting.hasQueued)
    }

    @Test("clocks: a head begun in a read that did not complete it arms header-timeout once; idle-timeout does not run while an answer is prepared")
    func clocks() {
        var machine = Self.machine(idle: 10, header: 5)
        // A batch of reads that delivered no part carried part of a head.
        let deadline = machine.readComplete(at: Self.start)
        #expect(deadline == Self.start + .seconds(5))
        #expect(machine.readComplete(at: Self.start + .seconds(1)) == nil, "armed once per head")
        #expect(machine.expired(at: Self.start + .seconds(4)) == nil)
        #expect(machine.expired(at: Self.start + .seconds(5)) == .header)

        var delivered = Self.machine()
        _ = delivered.read(Self.head, writable: true)
        #expect(delivered.readBatchOpen)
        #expect(delivered.readComplete(at: Self.start) == nil)
        #expect(!delivered.readBatchOpen)
        delivered.headReceived(keepAlive: true)
        // Mid-body, silent for idle-timeout: the client's fault.
        #expect(delivered.expired(at: Self.start + .seconds(10)) == .idle)
        // Awaiting its answer, the client is waiting, not idle: the clock starts again.
        _ = delivered.endOfBody()
        #expect(delivered.expired(at: Self.start + .seconds(10)) == nil)
        #expect(delivered.deadlines.nextCheck == Self.start + .seconds(20))
        // Idle between requests: the connection's idle clock.
        var idle = Self.machine()
        #expect(idle.expired(at: Self.start + .seconds(10)) == .idle)
    }

    @Test("Expect: 100-continue: due once; a refusal before it is sent closes the connection (the body may follow or not), after it does not")
    func expectContinue() {
        var refusedFirst = Self.machine()
        refusedFirst.headReceived(keepAlive: true, expectsContinue: true)
        refusedFirst.refusing(closing: false)
        #expect(refusedFirst.closesAfterAnswer)

        var continued = Self.machine()
        continued.headReceived(keepAlive: true, expectsContinue: true)
        let due = continued.continueDue()
        let again = continued.continueDue()
        #expect(due && !again, "sent once")
        continued.refusing(closing: false)
        #expect(!continued.closesAfterAnswer, "the body follows the 100: read and dropped, the connection kept")
        continued.refusing(closing: true)
        #expect(continued.closesAfterAnswer)

        var plain = Self.machine()
        plain.headReceived(keepAlive: true)
        let plainDue = plain.continueDue()
        #expect(!plainDue)
    }

    @Test("an answer of unknown length ends an HTTP/1.0 connection (no chunked body for it); an HTTP/1.1 one goes on")
    func http10UnknownLength() {
        var old = Self.machine()
        old.headReceived(keepAlive: true, predatesHTTP11: true)
        _ = old.endOfBody()
        let closes = old.startAnswer(lengthKnown: false)
        #expect(closes && old.state == .answering(closeAfterAnswer: true))

        var framed = Self.machine()
        framed.headReceived(keepAlive: true, predatesHTTP11: true)
        _ = framed.endOfBody()
        let framedCloses = framed.startAnswer(lengthKnown: true)
        #expect(!framedCloses)

        var current = Self.machine()
        current.headReceived(keepAlive: true)
        _ = current.endOfBody()
        let currentCloses = current.startAnswer(lengthKnown: false)
        #expect(!currentCloses)
    }

    @Test("a body broken off is the client's only while it was still arriving and no answer had begun")
    func brokeOffMidBody() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        #expect(machine.brokeOffMidBody)
        machine.startAnswer()
        #expect(!machine.brokeOffMidBody, "answered early: the backend's answer was begun")
        var whole = Self.machine()
        whole.headReceived(keepAlive: true)
        _ = whole.endOfBody()
        #expect(!whole.brokeOffMidBody)
        whole.closed()
        #expect(!whole.brokeOffMidBody)
    }

    @Test("a closing connection's last answer: closed idle-timeout after its end whether the client took it or not; nothing else runs out meanwhile")
    func lastAnswerUnread() {
        var machine = Self.machine(idle: 10)
        machine.headReceived(keepAlive: false)
        _ = machine.endOfBody()
        machine.startAnswer()
        #expect(machine.answerEnded(writable: false) == .endAndClose)
        let closeBy = machine.closingAfterLastAnswer(at: Self.start + .seconds(1))
        #expect(closeBy == Self.start + .seconds(11) && machine.nextCheck == closeBy)
        let early = machine.expired(at: Self.start + .seconds(10))
        #expect(early == nil)
        let due = machine.expired(at: closeBy)
        #expect(due == .lastAnswerUnread)

        var closed = Self.machine()
        closed.closed()
        #expect(closed.nextCheck == .distantFuture, "closing without a last answer: no clock")
        let never = closed.expired(at: Self.start + .seconds(1000))
        #expect(never == nil)
    }

    @Test("an event the state does not allow, in a release build: the connection goes to closing, the fault is taken once")
    func faults() {
        var machine = ConnectionStateMachine(
            deadlines: ClientDeadlines(idle: .seconds(10), header: .seconds(5), now: Self.start), trapsOnFault: false)
        let ended = machine.endOfBody()
        #expect(!ended && machine.isClosing)
        let fault = machine.takeFault()
        #expect(fault?.machine == .connection && fault?.event.hasPrefix("the end of a body that had ended") == true)
        #expect(machine.takeFault() == nil)

        var answered = ConnectionStateMachine(
            deadlines: ClientDeadlines(idle: .seconds(10), header: .seconds(5), now: Self.start), trapsOnFault: false)
        _ = answered.read(Self.head, writable: true)
        answered.headReceived(keepAlive: true)
        answered.startAnswer()
        answered.startAnswer()
        #expect(answered.isClosing && answered.takeFault()?.event.hasPrefix("an answer begun twice") == true)
    }
}
