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

    static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
