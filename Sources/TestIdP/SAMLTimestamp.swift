import Foundation

/// Formats instants as SAML `xs:dateTime` in UTC with a `Z` (`2025-01-31T12:00:00Z`).
enum SAMLTimestamp {
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))Z"
    }

    /// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
