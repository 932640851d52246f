import SAMLEncoding

/// A deliberately plain `application/x-www-form-urlencoded` reader, independent of the
/// gateway's, as the backend would have: every value is percent-decoded exactly once.
enum ReferenceForm {
    /// Field name → (value as received, value decoded once). `nil` when a `%` escape is broken.
    static func parse(_ body: [UInt8]) -> [String: (raw: String, decoded: [UInt8])]? {
        var fields: [String: (raw: String, decoded: [UInt8])] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]).flatMap({ String(validating: $0, as: UTF8.self) }) else { return nil }
            let rawValue = parts.count > 1 ? Array(parts[1]) : []
            guard let value = decode(rawValue[...]) else { return nil }
            fields[name] = (String(decoding: rawValue, as: UTF8.self), value)
        }
        return fields
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
                index += 1
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = HexDigits.value(bytes[index + 1]),
                      let low = HexDigits.value(bytes[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }
}
