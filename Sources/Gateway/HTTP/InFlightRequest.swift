import Dispatch
import NIOHTTP1
import ServerSupport

/// The request a connection is answering, from its head to the end of its answer: what it is,
/// where its body goes, the trip answering it, and what its one report will say (``record``). Its framing
/// (body and answer arrived or not, close after the answer) is the connection's
/// ``ConnectionStateMachine``; nothing here decides an order.
///
/// A class: it is read and updated on every event of the request, and a struct this size would
/// be copied (its references retained and released) each time.
final class InFlightRequest {
    /// What happens to the body of the request in flight while it arrives.
    enum Body {
        /// The answer does not depend on it: read and dropped.
        case discard
        /// Streamed to the backend.
        case forward(UpstreamTrip)
        /// A token exchange's: collected by its ``ExchangeFlow`` for the workers.
        case collect(ExchangeFlow)
    }

    let head: HTTPRequestHead
    let requestID: String
    /// The request announces a body (``HTTPRequestHead/announcesBody``), read once.
    let hasBody: Bool
    /// The W3C trace this request belongs to, continued or started here.
    let trace: TraceContext
    /// The gateway's span of this request, when tracing is on and the sampler records it.
    let span: (any RequestSpan)?
    let started: UInt64
    /// `nil` until routed, and for a request refused before it could be (its framing).
    var route: GatewayRoute?
    var body: Body = .discard
    /// The token exchange this request is, once admitted.
    var exchange: ExchangeFlow?
    /// The request ends the connection after its answer (an upgrade, `CONNECT`): HTTP/1.1's
    /// parser reads nothing after it.
    var endsConnection = false
    var trip: UpstreamTrip?
    /// The connection's TLS (`nil` on a plain listener): its version, and the client's verified
    /// certificate (`tls-client-auth`), whose subject is the request's throttle key and audit line.
    var tls: TLSSession?
    /// The absolute-form target's authority, else `Host`: what `X-Forwarded-Host` reports.
    var authority: String?
    /// The backend API the request is for, from its canonical path (the one routed on): the
    /// vocabulary of its refusals. `nil` for a target that could not be parsed.
    var api: BackendAPI?
    /// What the request's one report says, kept by the ``RequestObserver`` alone.
    var record = RequestRecord()

    init(head: HTTPRequestHead, requestID: String, trace: TraceContext, span: (any RequestSpan)?, started: UInt64) {
        self.head = head
        self.requestID = requestID
        self.trace = trace
        self.span = span
        self.started = started
        hasBody = head.announcesBody
    }

    /// The label of `samlgate_requests_total` and the log line: the route's, or
    /// `invalid_request` for a request refused before it could be routed.
    var routeLabel: String { route?.label ?? GatewayRoute.unroutedLabel }

    /// A token exchange: its refusals are the `SAMLResponse` parameter's (see ``GatewayError/answer(api:exchange:showReason:)``).
    var isExchange: Bool { route == .exchangeV1 || route == .exchangeV2 }

    /// The trip answering this request is dropped (a refusal, a broken body, a client gone), and
    /// so is an exchange still being decided: nothing is recorded or forwarded for it any more.
    func dropWork() {
        trip?.cancel()
        trip = nil
        exchange?.cancel()
        body = .discard
    }
}

/// Request ids: the client's `X-Request-Id` when it is short and plain, otherwise a fresh one
/// (``RequestIDSequence``). The id is the `trace` of error bodies and the key that ties log lines together.
enum RequestID {
    static func make(incoming: String?, fresh: inout RequestIDSequence) -> String {
        if let incoming, (1...128).contains(incoming.utf8.count),
            incoming.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        {
            return incoming
        }
        return fresh.next()
    }

    /// `high` then `low` as 32 lower-case hex digits, written into one string: one allocation
    /// per id, not one per conversion and concatenation.
    static func hex(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(high, into: buffer, at: 0)
            write(low, into: buffer, at: 16)
            return 32
        }
    }

    /// `value` as 16 lower-case hex digits at `offset`.
    static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let digits: StaticString = "0123456789abcdef"
        for index in 0..<16 {
            buffer[offset + index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
        }
    }
}

/// Fresh request ids for one client connection: 32 hex digits, a random half drawn once per
/// connection and a counter. Drawing 128 random bits per request cost a `getrandom` system call
/// each; ids only have to be unique and carry nothing about the request.
struct RequestIDSequence {
    private let prefix: UInt64
    private var counter: UInt64 = 0

    init(prefix: UInt64 = .random(in: .min ... .max)) {
        self.prefix = prefix
    }

    mutating func next() -> String {
        counter &+= 1
        return RequestID.hex(prefix, counter)
    }
}
