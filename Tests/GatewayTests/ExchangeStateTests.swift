import Testing

@testable import Gateway

/// The phases of a token exchange alone: the throttle before the worker, at most two
/// verifications, one out-of-turn fetch, one decision, nothing after a cancel.
@Suite("Exchange phases")
struct ExchangeStateTests {
    @Test("the shared throttle's answer comes before any verification; a throttled client is refused, decided once")
    func throttleFirst() {
        var state = ExchangeState()
        #expect(state.bodyComplete(awaitingThrottle: true) == .awaitThrottle)
        #expect(state.phase == .awaitingThrottle)
        // Throttled: refused from here, without a verification.
        let decided = state.decide()
        let again = state.decide()
        #expect(decided && !again && !state.isLive)

        var allowed = ExchangeState()
        _ = allowed.bodyComplete(awaitingThrottle: true)
        let passed = allowed.throttlePassed()
        #expect(passed)
        #expect(allowed.phase == .verifying(attempt: 1))

        var plain = ExchangeState()
        #expect(plain.bodyComplete(awaitingThrottle: false) == .verify)
    }

    @Test("an untrusted key: a store changed since the head is tried at once, else fetched once; never a third verification")
    func untrustedKey() {
        var changed = ExchangeState()
        _ = changed.bodyComplete(awaitingThrottle: false)
        #expect(changed.keyNotTrusted(refetchable: true, storeChanged: true) == .verifyAgain)
        #expect(changed.phase == .verifying(attempt: 2))
        #expect(changed.keyNotTrusted(refetchable: true, storeChanged: true) == .refuse, "verified at most twice")

        var fetched = ExchangeState()
        _ = fetched.bodyComplete(awaitingThrottle: false)
        #expect(fetched.keyNotTrusted(refetchable: true, storeChanged: false) == .refetch)
        let again = fetched.refetched(storeChanged: true)
        #expect(again && fetched.phase == .verifying(attempt: 2))
        #expect(fetched.keyNotTrusted(refetchable: true, storeChanged: false) == .refuse)

        var unchanged = ExchangeState()
        _ = unchanged.bodyComplete(awaitingThrottle: false)
        _ = unchanged.keyNotTrusted(refetchable: true, storeChanged: false)
        let verifyAgain = unchanged.refetched(storeChanged: false)
        #expect(!verifyAgain, "the fetch brought nothing new: refused as the first verification decided")

        var notFetched = ExchangeState()
        _ = notFetched.bodyComplete(awaitingThrottle: false)
        #expect(notFetched.keyNotTrusted(refetchable: false, storeChanged: true) == .refuse, "an MVPD whose metadata is not fetched")
    }

    @Test("a cancelled exchange decides nothing; a decided one cannot be cancelled into another decision")
    func cancel() {
        var state = ExchangeState()
        _ = state.bodyComplete(awaitingThrottle: false)
        state.recording()
        #expect(state.phase == .recordingReplay)
        state.cancel()
        let decided = state.decide()
        #expect(!state.isLive && !decided && state.phase == .cancelled)

        var done = ExchangeState()
        _ = done.bodyComplete(awaitingThrottle: false)
        _ = done.decide()
        done.cancel()
        #expect(done.phase == .decided)
    }

    @Test(
        "an event the phase does not allow, in a release build: the body completed twice is refused, an answer not awaited ignored; each fault reported once"
    )
    func faults() {
        var state = ExchangeState(trapsOnFault: false)
        _ = state.bodyComplete(awaitingThrottle: false)
        #expect(state.takeFault() == nil)
        #expect(state.bodyComplete(awaitingThrottle: false) == .refuse)
        #expect(state.takeFault()?.machine == .exchange)
        #expect(state.takeFault() == nil)
        let passed = state.throttlePassed()
        #expect(!passed && state.takeFault()?.event.hasPrefix("a throttle answer not awaited") == true)
    }
}
