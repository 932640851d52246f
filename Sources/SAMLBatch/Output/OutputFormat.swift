/// How records are written: one JSON object per line, or CSV with the same columns (RFC 4180
/// quoting; `error` and `meta` cells hold their JSON text).
@_spi(Benchmarks) public enum OutputFormat: String, Sendable, CaseIterable {
    case jsonl
    case csv
}
