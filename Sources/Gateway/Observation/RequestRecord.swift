/// What a request's one report says (``RequestObserver/finished(_:)``: the request line and
/// metric, the span's end, an exchange's audit line), gathered as the request goes by the
/// ``RequestObserver`` alone, from the facts its steps report (``RequestFact``) and the answer
/// it gets.
struct RequestRecord {
    /// The answer's status; 0 until one began.
    var status = 0
    /// The trust store's MVPD, once the exchange named one.
    var mvpd: String?
    /// The exchange was sent to the backend.
    var forwarded = false
    /// The code of the refusal or failure that answered it.
    var reason: String?
    /// Report-only: the refusal enforcing would have answered.
    var wouldRefuse: String?
    /// The verified response's digests (``AuditRecord``).
    var assertionHash: String?
    var subjectHMAC: String?
    /// When the trip to the backend began (`DispatchTime` nanoseconds): the start of its span.
    var tripStarted: UInt64 = 0
}
