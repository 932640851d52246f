/// `AP-Device-Identifier` as REST API v2 documents it: `<type> <identifier>`, the only type
/// `fingerprint`, the identifier the base64 of the app's stable device id.
///
/// Shared by the gateway (which refuses a malformed one before it verifies and records a
/// response the backend would then refuse for the header) and the reference upstream.
public enum DeviceIdentifierHeader {
    public static let name = "AP-Device-Identifier"

    /// `fingerprint` (any case), one space, then a non-empty identifier in base64 — the standard
    /// or the URL-safe alphabet, not both, `=` only as padding at the end (to a multiple of four)
    /// — and nothing after it: what a backend decoding it with a standard decoder accepts.
    public static func isWellFormed(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let type = "fingerprint "
        guard bytes.count > type.utf8.count, SchemePrefix.matches(bytes, type) else { return false }
        let identifier = bytes.dropFirst(type.utf8.count)
        let body = identifier.prefix { $0 != UInt8(ascii: "=") }
        let padding = identifier.count - body.count
        guard !body.isEmpty, padding <= 2, identifier.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else { return false }
        guard padding == 0 || identifier.count % 4 == 0 else { return false }
        let standard = body.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") }
        let urlSafe = body.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        return standard || urlSafe
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }
}
