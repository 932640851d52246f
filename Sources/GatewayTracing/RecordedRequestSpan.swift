import Dispatch
import Gateway

#if canImport(Glibc)
import Glibc
#endif

/// One finished span as the exporter sends it: plain values, made on an event loop and encoded
/// (``OTLPTraceEncoder``) on the exporter's task.
struct FinishedSpan: Sendable {
    enum Kind: UInt64, Sendable {
        case `internal` = 1
        case server = 2
    }

    enum Value: Sendable {
        case string(String)
        case integer(Int)
    }

    /// 32 lower-case hex digits (``TraceContext``'s, checked there).
    var traceID: String
    var spanID: UInt64
    /// 0 for none: a span that starts its trace.
    var parentSpanID: UInt64
    var traceState: String?
    var name: String
    var kind: Kind
    /// Wall-clock nanoseconds since the epoch.
    var start: UInt64
    var end: UInt64
    var attributes: [(String, Value)]
    /// OTLP's status `error` (a 5xx answered).
    var failed = false
}

/// ``RequestTracing`` for `samlgate serve`: each recorded request's spans are plain values
/// kept on the request's event loop and handed to the exporter's queue in one piece when the
/// request ends (one short lock per request); no tracer, no task and no thread hop per span.
final class SpanRecorder: RequestTracing {
    private let queue: SpanQueue

    init(queue: SpanQueue) {
        self.queue = queue
    }

    func startRequest(traceID: String, spanID: UInt64, parentSpanID: UInt64?, state: String?, at uptime: UInt64) -> any RequestSpan {
        RecordedRequestSpan(
            queue: queue, traceID: traceID, spanID: spanID, parentSpanID: parentSpanID ?? 0,
            state: state.flatMap { TraceState.isWellFormed($0) ? $0 : nil }, at: uptime)
    }
}

/// A recorded request's span and its stages, until the request ends.
final class RecordedRequestSpan: RequestSpan {
    private let queue: SpanQueue
    /// The request's own span first, its stages after it.
    private var spans: [FinishedSpan]
    /// Wall-clock nanoseconds minus `DispatchTime` nanoseconds, taken once: a clock step moves
    /// no span of the request against another.
    private let epochOffset: UInt64

    init(queue: SpanQueue, traceID: String, spanID: UInt64, parentSpanID: UInt64, state: String?, at uptime: UInt64) {
        self.queue = queue
        epochOffset = Self.wallClockNanoseconds() &- DispatchTime.now().uptimeNanoseconds
        spans = []
        spans.reserveCapacity(4)
        spans.append(
            FinishedSpan(
                traceID: traceID, spanID: spanID, parentSpanID: parentSpanID, traceState: state, name: "", kind: .server,
                start: uptime &+ epochOffset, end: 0, attributes: []))
    }

    func stage(_ name: String, from start: UInt64, to end: UInt64, attributes: [(String, String)], integers: [(String, Int)]) {
        var values: [(String, FinishedSpan.Value)] = []
        values.reserveCapacity(attributes.count + integers.count)
        for (key, value) in attributes { values.append((key, .string(value))) }
        for (key, value) in integers { values.append((key, .integer(value))) }
        let request = spans[0]
        spans.append(
            FinishedSpan(
                traceID: request.traceID, spanID: Self.stageID(of: request.spanID, index: spans.count), parentSpanID: request.spanID,
                traceState: request.traceState, name: name, kind: .internal, start: start &+ epochOffset, end: end &+ epochOffset,
                attributes: values))
    }

    func setAttribute(_ key: String, _ value: String) {
        spans[0].attributes.append((key, .string(value)))
    }

    func end(name: String, status: Int, at uptime: UInt64) {
        spans[0].name = name
        if status > 0 { spans[0].attributes.append(("http.response.status_code", .integer(status))) }
        // A server span fails on a 5xx only; a 4xx is the client's (OpenTelemetry's HTTP conventions).
        spans[0].failed = status >= 500
        spans[0].end = uptime &+ epochOffset
        queue.submit(spans)
        spans = []
    }

    /// A stage's span id: the request's span id and the stage's index mixed (SplitMix64's
    /// finalizer, a bijection), so the stages of one request never share an id, and ids stay as
    /// uniform as the request's.
    static func stageID(of spanID: UInt64, index: Int) -> UInt64 {
        var mixed = spanID &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed &>> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed &>> 31
        return mixed != 0 ? mixed : 1
    }

    private static func wallClockNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}

/// The W3C `tracestate` a span carries: the client's, when it follows the grammar.
enum TraceState {
    /// Whether `state` follows W3C Trace Context's `tracestate` grammar: at most 32 list members
    /// `key=value`, separated by `,` and optional spaces, none empty. A key is 1 to 256 of `a-z`,
    /// digits, `_-*/@`, starting with a letter or a digit, with at most one `@` (a tenant of at
    /// most 241 characters before it, a system of 1 to 14 after it); a value 1 to 256 printable
    /// ASCII characters but `,` and `=`, not ending in a space.
    ///
    /// The gateway forwards any printable `tracestate` of at most 512 bytes; the spans carry only
    /// one that a collector reading the grammar strictly accepts.
    static func isWellFormed(_ state: String) -> Bool {
        let members = state.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard members.count <= 32 else { return false }
        for (index, member) in members.enumerated() {
            // Spaces after a comma are optional whitespace; none before the first member.
            let trimmed = index == 0 ? member[...] : member.drop(while: { $0 == UInt8(ascii: " ") })
            guard let equals = trimmed.firstIndex(of: UInt8(ascii: "=")),
                isKey(trimmed[..<equals]), isValue(trimmed[trimmed.index(after: equals)...])
            else { return false }
        }
        return true
    }

    private static func isKey(_ key: Substring.UTF8View) -> Bool {
        guard (1...256).contains(key.count), isLowerAlpha(key.first) || isDigit(key.first),
            key.allSatisfy({ isKeyCharacter($0) || $0 == UInt8(ascii: "@") })
        else { return false }
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else { return true }
        let system = key[key.index(after: at)...]
        return key.distance(from: key.startIndex, to: at) <= 241 && (1...14).contains(system.count) && !system.contains(UInt8(ascii: "@"))
    }

    private static func isValue(_ value: Substring.UTF8View) -> Bool {
        // Spaces before the next comma are optional whitespace, not the value's.
        var end = value.endIndex
        while end > value.startIndex, value[value.index(before: end)] == UInt8(ascii: " ") { end = value.index(before: end) }
        let trimmed = value[..<end]
        return (1...256).contains(trimmed.count)
            && trimmed.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }

    private static func isKeyCharacter(_ byte: UInt8) -> Bool {
        isLowerAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "*")
            || byte == UInt8(ascii: "/")
    }

    private static func isLowerAlpha(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ?? false
    }

    private static func isDigit(_ byte: UInt8?) -> Bool {
        byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false
    }
}
