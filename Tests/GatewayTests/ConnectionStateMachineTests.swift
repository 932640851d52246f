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
        #expect(machine.read(Self.head, writable: true) == .deliver(Self.head))
        machine.headReceived(keepAlive: true)
        #expect(machine.state == .inRequest(.receiving, closeAfterAnswer: false) && machine.hasRequest && !machine.bodyEnded)
        #expect(machine.endOfBody() == .none)
        #expect(machine.state == .inRequest(.awaitingAnswer, closeAfterAnswer: false))
        _ = machine.startAnswer()
        #expect(machine.state == .inRequest(.answering, closeAfterAnswer: false) && machine.answerStarted)
        #expect(machine.answerEnded(writable: true) == .endAnswer(complete: true, read: false))
        #expect(machine.state == .idle && !machine.hasRequest)
    }

    @Test("no keep-alive, or closeAfterAnswer on the way (an upgrade, a refusal with a body left unread): the answer ends the connection")
    func closing() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: false)
        #expect(machine.closesAfterAnswer)
        _ = machine.endOfBody()
        _ = machine.startAnswer()
        #expect(machine.answerEnded(writable: true) == .endAnswerAndClose)
        #expect(machine.state == .closing && machine.isClosing)
        // Whatever the client sends after a closing answer is never taken up.
        #expect(machine.read(Self.head, writable: true) == .none)

        var upgraded = Self.machine()
        upgraded.headReceived(keepAlive: true)
        _ = upgraded.closeAfterAnswer()
        #expect(upgraded.state == .inRequest(.receiving, closeAfterAnswer: true))
        _ = upgraded.startAnswer()
        #expect(upgraded.state == .inRequest(.answeringWhileReceiving, closeAfterAnswer: true))
        #expect(upgraded.answerEnded(writable: true) == .endAnswerAndClose)
    }

    @Test("an answer before the body ends (a refusal, a backend answering early): the rest of the body is drained, then the request is complete")
    func earlyAnswer() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        _ = machine.startAnswer()
        #expect(machine.state == .inRequest(.answeringWhileReceiving, closeAfterAnswer: false))
        #expect(machine.answerEnded(writable: true) == .endAnswer(complete: false, read: false))
        #expect(machine.state == .inRequest(.drainingBody, closeAfterAnswer: false) && machine.answerStarted && machine.hasRequest)
        // Body parts of the drained request are still delivered (to be dropped).
        #expect(machine.read(.body(ByteBuffer(string: "x")), writable: true) == .deliver(.body(ByteBuffer(string: "x"))))
        #expect(machine.endOfBody() == .complete)
        #expect(machine.state == .idle)
    }

    @Test("pipelining: a request behind one awaiting its answer waits, reads are held, and it is taken up in order once the answer is written")
    func pipelining() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        _ = machine.endOfBody()
        #expect(machine.read(Self.head, writable: true) == .none)
        #expect(machine.read(.end(nil), writable: true) == .none)
        #expect(machine.hasQueued && machine.reads.isPaused)
        #expect(machine.readRequested() == false, "a read asked for while held is kept")
        // Nothing is taken up while the request in flight awaits its answer.
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.nextQueued(writable: true) == nil)
        #expect(machine.endTakeUp() == .none)

        _ = machine.startAnswer()
        // The answer's end does not resume reads: what waited is taken up first.
        #expect(machine.answerEnded(writable: true) == .endAnswer(complete: true, read: false))
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.beginTakeUp(at: Self.start) == false, "a loop already running further up the stack goes on; no nested one")
        guard case .deliver(.head) = machine.nextQueued(writable: true) else {
            Issue.record("the pipelined head comes first")
            return
        }
        machine.headReceived(keepAlive: true)
        guard case .deliver(.end) = machine.nextQueued(writable: true) else {
            Issue.record("then its end")
            return
        }
        #expect(machine.endOfBody() == .none)
        #expect(machine.nextQueued(writable: true) == nil)
        // The queue is empty: reads resume, and the read held earlier is issued now.
        #expect(machine.endTakeUp() == .read)
        #expect(!machine.reads.isPaused)
    }

    @Test("a closing answer drops what was pipelined behind it")
    func pipelinedAfterClosing() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: false)
        _ = machine.endOfBody()
        #expect(machine.read(Self.head, writable: true) == .none)
        #expect(!machine.hasQueued)
    }

    @Test("a client that does not take its answers: no request is begun until the channel is writable again")
    func unreadAnswers() {
        var machine = Self.machine()
        #expect(machine.read(Self.head, writable: false) == .none)
        #expect(machine.reads.isPaused)
        #expect(machine.beginTakeUp(at: Self.start) == true)
        #expect(machine.nextQueued(writable: false) == nil)
        #expect(machine.endTakeUp() == .none, "reads stay held while the head waits")
        #expect(machine.writable() == .takeUpQueued)
        // Writable with nothing queued: a read is due only when one was held.
        var idle = Self.machine()
        #expect(idle.writable() == .none)
        // An answer ending while the client is not writable holds reads.
        idle.headReceived(keepAlive: true)
        _ = idle.endOfBody()
        _ = idle.startAnswer()
        #expect(idle.answerEnded(writable: false) == .endAnswer(complete: true, read: false))
        #expect(idle.reads.isPaused)
        #expect(idle.readRequested() == false)
        #expect(idle.writable() == .read, "the held read is issued once the client takes its answers")
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
        _ = busy.startAnswer()
        #expect(busy.answerEnded(writable: true) == .endAnswerAndClose, "a half-closed client gets its answer, then the close")

        var pipelined = Self.machine()
        pipelined.headReceived(keepAlive: true)
        _ = pipelined.endOfBody()
        #expect(pipelined.read(Self.head, writable: true) == .none)
        #expect(pipelined.clientInputClosed() == .none)
        #expect(!pipelined.inputClosed, "the half-close waits behind the queued request")
        _ = pipelined.startAnswer()
        _ = pipelined.answerEnded(writable: true)
        #expect(pipelined.beginTakeUp(at: Self.start) == true)
        guard case .deliver(.head) = pipelined.nextQueued(writable: true) else {
            Issue.record("the queued head comes before the half-close")
            return
        }
        pipelined.headReceived(keepAlive: true)
        // Its body is still arriving (from what was read before the half-close): the half-close is next.
        // Its body is still arriving (from what was read before the half-close): the half-close
        // is next, and with a request in flight it closes after the answer.
        #expect(pipelined.nextQueued(writable: true) == Optional.some(.none), "the half-close follows the queued head")
        #expect(pipelined.inputClosed)
        _ = pipelined.endOfBody()
        _ = pipelined.startAnswer()
        #expect(pipelined.answerEnded(writable: true) == .endAnswerAndClose)
    }

    @Test("quiesce: idle or draining connections close now; a request in flight is answered with Connection: close; queued ones are dropped")
    func quiesce() {
        var idle = Self.machine()
        #expect(idle.quiesce() == .close)

        var busy = Self.machine()
        busy.headReceived(keepAlive: true)
        _ = busy.endOfBody()
        #expect(busy.read(Self.head, writable: true) == .none)
        #expect(busy.quiesce() == .none)
        #expect(busy.closesAfterAnswer && !busy.hasQueued)

        var draining = Self.machine()
        draining.headReceived(keepAlive: true)
        _ = draining.startAnswer()
        _ = draining.answerEnded(writable: true)
        #expect(draining.quiesce() == .close)
    }

    @Test("parser failures: handled now when idle or mid-body, queued behind a request awaiting its answer, ignored once closing")
    func parserFailures() {
        var idle = Self.machine()
        #expect(idle.parserFailed(.invalidHeaderToken) == .unparsable(.invalidHeaderToken))
        idle.closed()
        #expect(idle.parserFailed(.invalidHeaderToken) == .none)

        var midBody = Self.machine()
        midBody.headReceived(keepAlive: true)
        #expect(midBody.parserFailed(.invalidChunkSize) == .unparsable(.invalidChunkSize))

        var waiting = Self.machine()
        waiting.headReceived(keepAlive: true)
        _ = waiting.endOfBody()
        #expect(waiting.parserFailed(.invalidHeaderToken) == .none)
        #expect(waiting.hasQueued)
    }

    @Test("clocks: a head begun in a read that did not complete it arms header-timeout once; idle-timeout does not run while an answer is prepared")
    func clocks() {
        var machine = Self.machine(idle: 10, header: 5)
        // A batch of reads that delivered no part carried part of a head.
        #expect(machine.readComplete(at: Self.start) == .wake(at: Self.start + .seconds(5)))
        #expect(machine.readComplete(at: Self.start + .seconds(1)) == .none, "armed once per head")
        #expect(machine.expired(at: Self.start + .seconds(4)) == .wake(at: Self.start + .seconds(5)))
        #expect(machine.expired(at: Self.start + .seconds(5)) == .timedOut(.header))

        var delivered = Self.machine()
        _ = delivered.read(Self.head, writable: true)
        #expect(delivered.readBatchOpen)
        #expect(delivered.readComplete(at: Self.start) == .none)
        #expect(!delivered.readBatchOpen)
        delivered.headReceived(keepAlive: true)
        // Mid-body, silent for idle-timeout: the client's fault.
        #expect(delivered.expired(at: Self.start + .seconds(10)) == .timedOut(.idle))
        // Awaiting its answer, the client is waiting, not idle: the clock starts again.
        _ = delivered.endOfBody()
        #expect(delivered.expired(at: Self.start + .seconds(10)) == .wake(at: Self.start + .seconds(20)))
        #expect(delivered.deadlines.nextCheck == Self.start + .seconds(20))
        // Idle between requests: the connection's idle clock.
        var idle = Self.machine()
        #expect(idle.expired(at: Self.start + .seconds(10)) == .timedOut(.idle))
    }

    @Test("Expect: 100-continue: due once; a refusal before it is sent closes the connection (the body may follow or not), after it does not")
    func expectContinue() {
        var refusedFirst = Self.machine()
        refusedFirst.headReceived(keepAlive: true, expectsContinue: true)
        #expect(refusedFirst.refusing(closing: false) == .none)
        #expect(refusedFirst.closesAfterAnswer)

        var continued = Self.machine()
        continued.headReceived(keepAlive: true, expectsContinue: true)
        let due = continued.bodyWanted()
        let again = continued.bodyWanted()
        #expect(due == .writeContinue && again == .none, "sent once")
        #expect(continued.refusing(closing: false) == .none)
        #expect(!continued.closesAfterAnswer, "the body follows the 100: read and dropped, the connection kept")
        #expect(continued.refusing(closing: true) == .none)
        #expect(continued.closesAfterAnswer)

        var plain = Self.machine()
        plain.headReceived(keepAlive: true)
        let plainDue = plain.bodyWanted()
        #expect(plainDue == .none)
    }

    @Test("an answer of unknown length ends an HTTP/1.0 connection (no chunked body for it); an HTTP/1.1 one goes on")
    func http10UnknownLength() {
        var old = Self.machine()
        old.headReceived(keepAlive: true, predatesHTTP11: true)
        _ = old.endOfBody()
        #expect(old.startAnswer(lengthKnown: false) == .none)
        #expect(old.closesAfterAnswer && old.state == .inRequest(.answering, closeAfterAnswer: true))

        var framed = Self.machine()
        framed.headReceived(keepAlive: true, predatesHTTP11: true)
        _ = framed.endOfBody()
        _ = framed.startAnswer(lengthKnown: true)
        #expect(!framed.closesAfterAnswer)

        var current = Self.machine()
        current.headReceived(keepAlive: true)
        _ = current.endOfBody()
        _ = current.startAnswer(lengthKnown: false)
        #expect(!current.closesAfterAnswer)
    }

    @Test("a body broken off is the client's only while it was still arriving and no answer had begun")
    func brokeOffMidBody() {
        var machine = Self.machine()
        machine.headReceived(keepAlive: true)
        #expect(machine.brokeOffMidBody)
        _ = machine.startAnswer()
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
        _ = machine.startAnswer()
        #expect(machine.answerEnded(writable: false) == .endAnswerAndClose)
        let closeBy = Self.start + .seconds(11)
        #expect(machine.closingAfterLastAnswer(at: Self.start + .seconds(1)) == .wake(at: closeBy))
        #expect(machine.nextCheck == closeBy)
        #expect(machine.expired(at: Self.start + .seconds(10)) == .wake(at: closeBy))
        #expect(machine.expired(at: closeBy) == .timedOut(.lastAnswerUnread))

        var closed = Self.machine()
        closed.closed()
        #expect(closed.nextCheck == .distantFuture, "closing without a last answer: no clock")
        #expect(closed.expired(at: Self.start + .seconds(1000)) == .wake(at: .distantFuture))
    }

    @Test("an event the state does not allow, in a release build: the fault is the event's action, and the connection goes to closing")
    func faults() {
        var machine = ConnectionStateMachine(
            deadlines: ClientDeadlines(idle: .seconds(10), header: .seconds(5), now: Self.start), trapsOnFault: false)
        guard case .fault(let fault) = machine.endOfBody() else {
            Issue.record("an end of body with no request is a fault")
            return
        }
        #expect(machine.isClosing)
        #expect(fault.machine == .connection && fault.event.hasPrefix("the end of a body that had ended"))

        var answered = ConnectionStateMachine(
            deadlines: ClientDeadlines(idle: .seconds(10), header: .seconds(5), now: Self.start), trapsOnFault: false)
        _ = answered.read(Self.head, writable: true)
        answered.headReceived(keepAlive: true)
        #expect(answered.startAnswer() == .none)
        guard case .fault(let twice) = answered.startAnswer() else {
            Issue.record("an answer begun twice is a fault")
            return
        }
        #expect(answered.isClosing && twice.event.hasPrefix("an answer begun twice"))
        #expect(answered.startAnswer() == .none, "closing: nothing more is written, and nothing more is a fault")

        var idle = ConnectionStateMachine(
            deadlines: ClientDeadlines(idle: .seconds(10), header: .seconds(5), now: Self.start), trapsOnFault: false)
        guard case .fault = idle.refusing(closing: true) else {
            Issue.record("a refusal closing with no request in flight is a fault the driver runs")
            return
        }
    }
}
