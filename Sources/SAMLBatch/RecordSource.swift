/// Where a record came from, as the output's `source` shows it: the path, `path:LINE` for a
/// JSON Lines record, `path#N` for the N-th entry of a HAR file (both 1-based).
struct RecordSource: Sendable, CustomStringConvertible {
    enum Locator: Sendable {
        case whole
        case line(Int)
        case entry(Int)
    }

    var path: String
    var locator: Locator

    var description: String {
        switch locator {
        case .whole: path
        case .line(let n): "\(path):\(n)"
        case .entry(let n): "\(path)#\(n)"
        }
    }
}
