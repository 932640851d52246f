/// Reads the subject of a token exchange's response just far enough to give the user a stable,
/// opaque id: the gateway in front has already verified the signature, and the reference
/// upstream never keeps or echoes the NameID itself — only a hash of it.
enum SAMLSubject {
    /// A 64-bit FNV-1a hash of the `NameID` text, in hex; `anonymous` when there is none.
    static func userID(xml: [UInt8]) -> String {
        guard let text = nameIDText(xml) else { return "anonymous" }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The text after the first `NameID` start tag (any prefix), up to the next `<`. The first
    /// match in document order is a start tag: its end tag comes after it.
    static func nameIDText(_ xml: [UInt8]) -> ArraySlice<UInt8>? {
        let marker = Array("NameID".utf8)
        guard xml.count > marker.count + 1 else { return nil }
        for index in 1..<(xml.count - marker.count) where xml[index] == marker[0] {
            guard xml[(index - 1)] == UInt8(ascii: "<") || xml[index - 1] == UInt8(ascii: ":"),
                  xml[index..<index + marker.count].elementsEqual(marker),
                  [UInt8(ascii: " "), UInt8(ascii: ">")].contains(xml[index + marker.count]),
                  let close = xml[(index + marker.count)...].firstIndex(of: UInt8(ascii: ">")) else { continue }
            let end = xml[(close + 1)...].firstIndex(of: UInt8(ascii: "<")) ?? xml.count
            return xml[(close + 1)..<end]
        }
        return nil
    }
}
