import NIOCore

/// The two clocks of a client connection, checked by one timer per connection:
///
/// - `idle-timeout`: nothing read for this long — between requests, within a head, within a
///   body (a client waiting for its answer is not idle: the handler decides that);
/// - `header-timeout`: a request head not complete this long after its first bytes arrived,
///   however slowly they trickle in (each byte resets the idle clock, not this one).
///
/// A read only notes the time; the timer is re-armed when it fires early, and moved forward
/// only when a head starts (rare: a head normally arrives whole in the read that starts it).
struct ClientDeadlines {
    enum Expiry {
        case idle
        case header
    }

    let idle: TimeAmount
    let header: TimeAmount
    private var lastRead: NIODeadline
    private var headDeadline: NIODeadline?

    init(idle: TimeAmount, header: TimeAmount, now: NIODeadline) {
        self.idle = idle
        self.header = header
        lastRead = now
    }

    mutating func noteRead(at now: NIODeadline) {
        lastRead = now
    }

    /// Bytes of a head arrived without completing it. Returns the new deadline when it is the
    /// first such read of this head (the timer must then fire no later than it).
    mutating func headStarted(at now: NIODeadline) -> NIODeadline? {
        guard headDeadline == nil else { return nil }
        headDeadline = now + header
        return headDeadline
    }

    mutating func headComplete() {
        headDeadline = nil
    }

    /// Which clock ran out by `now`, the header's first.
    func expired(at now: NIODeadline) -> Expiry? {
        if let headDeadline, now >= headDeadline { return .header }
        if now >= lastRead + idle { return .idle }
        return nil
    }

    /// When the timer must next look.
    var nextCheck: NIODeadline {
        let idleAt = lastRead + idle
        guard let headDeadline else { return idleAt }
        return min(idleAt, headDeadline)
    }
}
