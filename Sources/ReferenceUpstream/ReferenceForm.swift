import SAMLEncoding

/// A deliberately plain `application/x-www-form-urlencoded` reader, independent of the
/// gateway's, as the backend would have: every value is percent-decoded exactly once.
///
/// Plain but not slow: it runs on every exchange of `make load`, on the cores the gateway is
/// measured on, so it finds pairs in the body's bytes in place (no split into arrays of pairs)
/// and decodes each name and value in one pass into one buffer of its encoded length.
enum ReferenceForm {
    /// Field name → (value as received, value decoded once). `nil` when a `%` escape is broken.
    static func parse(_ body: UnsafeBufferPointer<UInt8>) -> [String: (raw: String, decoded: [UInt8])]? {
        var fields: [String: (raw: String, decoded: [UInt8])] = [:]
        var start = 0
        while start < body.count {
            let end = body[start...].firstIndex(of: UInt8(ascii: "&")) ?? body.count
            defer { start = end + 1 }
            guard end > start else { continue }  // empty pairs (`&&`) are skipped
            let pair = UnsafeBufferPointer(rebasing: body[start..<end])
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
            guard let name = decode(UnsafeBufferPointer(rebasing: pair[..<equals])).flatMap({ String(validating: $0, as: UTF8.self) })
            else { return nil }
            let rawValue = UnsafeBufferPointer(rebasing: pair[min(equals + 1, pair.count)...])
            guard let value = decode(rawValue) else { return nil }
            fields[name] = (String(decoding: rawValue, as: UTF8.self), value)
        }
        return fields
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var broken = false
        let out = [UInt8](unsafeUninitializedCapacity: bytes.count) { out, written in
            var index = 0
            written = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "+") {
                    out[written] = UInt8(ascii: " ")
                    index += 1
                } else if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.count, let high = HexDigits.value(bytes[index + 1]),
                        let low = HexDigits.value(bytes[index + 2])
                    else {
                        broken = true
                        return
                    }
                    out[written] = high << 4 | low
                    index += 3
                } else {
                    out[written] = byte
                    index += 1
                }
                written += 1
            }
        }
        return broken ? nil : out
    }
}
