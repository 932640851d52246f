/// `AP-Device-Identifier` as REST API v2 documents it: `<type> <identifier>`, the only type
/// `fingerprint`, the identifier the base64 of the app's stable device id.
///
/// Shared by the gateway (which refuses a malformed one before it verifies and records a
/// response the backend would then refuse for the header) and the reference upstream.
public enum DeviceIdentifierHeader {
    public static let name = "AP-Device-Identifier"

    /// `fingerprint` (any case), one or more spaces, then a non-empty identifier of base64
    /// characters (standard or URL-safe alphabet, padding allowed) and nothing after it.
    public static func isWellFormed(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let type = Array("fingerprint".utf8)
        guard bytes.count > type.count, zip(bytes, type).allSatisfy({ $0 | 0x20 == $1 }) else { return false }
        let rest = bytes.dropFirst(type.count)
        guard rest.first == UInt8(ascii: " ") else { return false }
        let identifier = rest.drop(while: { $0 == UInt8(ascii: " ") })
        return !identifier.isEmpty && identifier.allSatisfy(isBase64)
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
