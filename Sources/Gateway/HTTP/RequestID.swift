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
