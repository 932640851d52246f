/// How log records are written to standard error.
package enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (for log shippers).
    case json
    /// `timestamp level message key=value …` (for people).
    case text
}
