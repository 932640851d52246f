import Dispatch
import SAMLVerification
import Synchronization
import TestIdP
import Testing

/// One `Verifier` shared by 8 Dispatch threads at once, each verifying many responses.
@Suite struct ConcurrencyTests {
    @Test func eightThreadsVerifyConcurrently() {
        let documents = (0..<16).map { i in
            Array(Fixtures.issue([SignTarget.assertion, .response, .both][i % 3], idp: i % 2 == 0 ? Fixtures.rsaIdP : Fixtures.ecIdP).utf8)
        }
        let verifier = Fixtures.verifier([Fixtures.rsaPair, Fixtures.ecPair], replay: InMemoryReplayCache())
        let noReplay = Fixtures.verifier([Fixtures.rsaPair, Fixtures.ecPair])
        let failures = Atomic<Int>(0)
        let successes = Atomic<Int>(0)
        let replayAccepted = Atomic<Int>(0)
        let replayRefused = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<25 {
                let document = documents[(worker + round) % documents.count]
                // Replay-checked verifications in the first two rounds: worker w sends documents
                // w and w + 1, so documents 0…8 are sent 16 times and each is accepted once.
                if round < 2 {
                    do {
                        _ = try verifier.verify(document, mvpd: Fixtures.mvpd)
                        replayAccepted.add(1, ordering: .relaxed)
                    } catch let error as VerificationError where error.code == .replayed {
                        replayRefused.add(1, ordering: .relaxed)
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
                do {
                    _ = try noReplay.verify(document, mvpd: Fixtures.mvpd)
                    successes.add(1, ordering: .relaxed)
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(successes.load(ordering: .relaxed) == 200)
        #expect(replayAccepted.load(ordering: .relaxed) == 9)
        #expect(replayRefused.load(ordering: .relaxed) == 7)
    }

    @Test func replayCacheAcceptsEachAssertionOnceAcrossThreads() {
        let document = Array(Fixtures.issue(.assertion).utf8)
        let verifier = Fixtures.verifier(replay: InMemoryReplayCache())
        let accepted = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if (try? verifier.verify(document, mvpd: Fixtures.mvpd)) != nil {
                accepted.add(1, ordering: .relaxed)
            }
        }
        #expect(accepted.load(ordering: .relaxed) == 1)
    }
}
