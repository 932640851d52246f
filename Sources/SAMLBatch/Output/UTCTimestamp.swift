import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `2026-11-22T07:26:46Z` for a date, with `gmtime_r` and no formatter object: the same text as
/// Foundation's `.iso8601` style at a fraction of its cost (it runs once per verified record).
enum UTCTimestamp {
    static func string(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        return "\(year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
