/// The hex digits of a percent-escape (RFC 3986 §2.1): one reading of them for the request
/// target and for parameter names, so that both decode an escape alike.
enum HexDigit {
    /// The value of an ASCII hex digit, either case; `nil` for any other byte.
    @inline(__always)
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
