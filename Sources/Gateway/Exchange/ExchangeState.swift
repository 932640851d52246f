/// The phases of one token exchange (``ExchangeFlow``) as a value: the body collected, the shared
/// throttle's answer awaited, verified once (and a second time only after the trust store
/// changed for an untrusted key), the replay recorded, decided — or cancelled at any point. Each
/// step returns what comes next; the flow carries it out (a worker, a fetch, Redis) and keeps no
/// flags of its own, and every rule is tested alone (`ExchangeStateTests`).
struct ExchangeState {
    enum Phase: Equatable {
        /// The body is arriving.
        case collecting
        /// The shared throttle's answer for this client is awaited (`throttle-store: shared`).
        case awaitingThrottle
        /// On a worker; `attempt` 2 after the trust store changed for an untrusted key.
        case verifying(attempt: Int)
        /// An out-of-turn metadata fetch for the MVPD is awaited.
        case refetching
        /// The shared replay store is recording the response.
        case recordingReplay
        /// Forwarded or refused: reported once.
        case decided
        /// The request ended otherwise (a client gone, a timeout, a refusal): nothing more.
        case cancelled
    }

    /// What to do once the body is complete.
    enum Next: Equatable {
        case awaitThrottle
        case verify
        case refuse
    }

    /// What to do after a verification refused the response for a key the store does not trust.
    enum AfterUntrustedKey: Equatable {
        /// The store changed since: verify against the current one, no fetch.
        case verifyAgain
        /// Fetch the MVPD's metadata now, then look again.
        case refetch
        /// Refuse as the verification decided.
        case refuse
    }

    private(set) var phase: Phase = .collecting
    /// An event this machine did not allow, not yet reported by the flow.
    private var fault: PendingStateFault

    /// - Parameter trapsOnFault: whether a fault stops a debug build (the tests of the release path say `false`).
    init(trapsOnFault: Bool = true) {
        fault = PendingStateFault(.exchange, traps: trapsOnFault)
    }

    /// The fault, once: the flow reports it.
    mutating func takeFault() -> StateFault? {
        fault.take()
    }

    /// Not decided and not cancelled: a return to the loop goes on.
    var isLive: Bool { phase != .decided && phase != .cancelled }

    /// The body arrived whole; `awaitingThrottle`: a shared throttle's answer for this client is
    /// to be awaited before the body goes to a worker.
    mutating func bodyComplete(awaitingThrottle: Bool) -> Next {
        guard phase == .collecting else { return illegal("a body completed twice", .refuse) }
        if awaitingThrottle {
            phase = .awaitingThrottle
            return .awaitThrottle
        }
        phase = .verifying(attempt: 1)
        return .verify
    }

    /// The shared throttle let the client through: the body goes to a worker (a throttled
    /// client is refused, ``decide()``). Returns false when no answer was awaited.
    mutating func throttlePassed() -> Bool {
        guard phase == .awaitingThrottle else { return illegal("a throttle answer not awaited", false) }
        phase = .verifying(attempt: 1)
        return true
    }

    /// The verification refused the response for a key not trusted. Only the first time, and
    /// only for an MVPD whose metadata is fetched (`refetchable`), may a rotation the next
    /// scheduled refresh would bring be looked for now: against a store that changed since the
    /// request's head (`storeChanged`) at once, else after a fetch. A response is verified at
    /// most twice.
    mutating func keyNotTrusted(refetchable: Bool, storeChanged: Bool) -> AfterUntrustedKey {
        guard phase == .verifying(attempt: 1), refetchable else { return .refuse }
        if storeChanged {
            phase = .verifying(attempt: 2)
            return .verifyAgain
        }
        phase = .refetching
        return .refetch
    }

    /// The fetch answered: verified again when the store it left (or one loaded meanwhile) is
    /// not the one the first verification used, else refused as that verification decided.
    mutating func refetched(storeChanged: Bool) -> Bool {
        guard phase == .refetching else { return illegal("a fetch not awaited", false) }
        guard storeChanged else { return false }
        phase = .verifying(attempt: 2)
        return true
    }

    /// Verified and to be recorded in the shared replay store before it is forwarded.
    mutating func recording() {
        guard case .verifying = phase else { return illegal("a record without a verification", ()) }
        phase = .recordingReplay
    }

    /// Forwarded or refused. Returns whether this is the decision (false once decided or cancelled).
    mutating func decide() -> Bool {
        guard isLive else { return false }
        phase = .decided
        return true
    }

    mutating func cancel() {
        if phase != .decided { phase = .cancelled }
    }

    /// An event the phase does not allow: a bug of the flow's (``StateFault``). A release build
    /// refuses the exchange, or ignores an answer it did not await, rather than forward anything.
    private mutating func illegal<T>(_ what: String, _ fallback: T) -> T {
        fault.record("\(what) (\(phase))")
        return fallback
    }
}
