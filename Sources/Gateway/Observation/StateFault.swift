/// An event a request's state machine does not allow in its state: a bug of the gateway's, never
/// something a client can cause. A debug build stops at it (`assertionFailure`: the whole test
/// suite runs in debug); a release build carries on the safe way — the connection machine ends
/// its connection (an HTTP/2 stream: resets it), the exchange's refuses or ignores the event, the
/// trip's fails the trip as broken —
/// and the request's driver counts it (`samlgate_state_errors_total{machine}`) and logs it
/// (`state_error`, the machine and the event; nothing of the request's content).
struct StateFault: Equatable, Sendable {
    /// Which machine refused the event (the metric's `machine` label).
    enum Machine: String, CaseIterable, Sendable {
        /// ``ConnectionStateMachine``: the framing of a connection or an HTTP/2 stream.
        case connection
        /// ``ExchangeState``: the phases of an exchange.
        case exchange
        /// ``UpstreamTripState``: a trip to the backend.
        case trip
    }

    let machine: Machine
    /// What happened, for the log line: the event and the state it came in.
    let event: String

    /// Reports the fault: stops a debug build when `traps`; returns it for the release build's record.
    static func illegal(_ machine: Machine, _ event: String, traps: Bool) -> StateFault {
        if traps { assertionFailure("\(machine.rawValue): \(event)") }
        return StateFault(machine: machine, event: event)
    }
}

/// The fault a machine met (``StateFault``), held until its executor reports it: the machines
/// whose events return values of their own (``ExchangeState``, ``UpstreamTripState``) keep one.
struct PendingStateFault {
    let machine: StateFault.Machine
    /// Whether a fault stops a debug build (the tests of the release path say `false`).
    let traps: Bool
    private var fault: StateFault?

    init(_ machine: StateFault.Machine, traps: Bool) {
        self.machine = machine
        self.traps = traps
    }

    mutating func record(_ event: String) {
        fault = StateFault.illegal(machine, event, traps: traps)
    }

    /// The fault, once.
    mutating func take() -> StateFault? {
        defer { fault = nil }
        return fault
    }
}
