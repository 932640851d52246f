import Foundation

/// Parses SAML `xs:dateTime` values (`2025-01-31T12:00:00Z`, optional fraction, optional
/// `Z` or `±hh:mm`; no zone means UTC as SAML requires) without Foundation's formatters,
/// which are slow and locale-dependent.
enum SAMLInstant {
    static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)
        while let last = bytes.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 { bytes.removeLast() }
        while let first = bytes.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 { bytes.removeFirst() }
        return bytes.withUnsafeBufferPointer { parse($0) }
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                let d = Int(b[i]) - 48
                guard d >= 0 && d <= 9 else { return nil }
                value = value * 10 + d
            }
            return value
        }
        guard b.count >= 19,
            let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
            let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), b[10] == UInt8(ascii: "T"),
            let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2) else { return nil }
                offset = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
                i += 6
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
