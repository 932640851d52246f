/// The table printed on standard error at the end of a run.
@_spi(Benchmarks) public enum BatchSummary {
    public static func render(_ report: BatchReport, verify: Bool) -> String {
        let s = report.statistics
        var rows: [(String, String)] = [("records", "\(s.records)"), ("encoded", "\(s.encoded)")]
        if verify { rows.append(("valid", "\(s.valid)")) }
        rows.append(("failed", "\(s.failed)"))
        for (code, count) in s.failuresByCode.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            rows.append(("  " + code, "\(count)"))
        }
        let seconds = max(report.wallSeconds, 1e-6)
        rows += [
            ("input read", "\(BatchProgress.megabytes(report.inputBytes)) MB"),
            ("values in", "\(BatchProgress.megabytes(s.bytesIn)) MB"),
            ("encoded out", "\(BatchProgress.megabytes(s.bytesOut)) MB"),
            ("wall time", "\(Self.seconds(seconds)) s"),
            ("throughput", "\(Int(Double(s.records) / seconds)) records/s, \(BatchProgress.decimal(Double(report.inputBytes) / seconds / 1e6)) MB/s"),
        ]
        if let peak = report.peakResidentBytes { rows.append(("peak memory", "\(peak / (1 << 20)) MiB")) }
        if !report.unreadableInputs.isEmpty { rows.append(("unreadable inputs", "\(report.unreadableInputs.count)")) }
        if let failure = report.outputFailure { rows.append(("output failed", failure)) }
        let width = rows.map(\.0.count).max() ?? 0
        return "samlgate batch summary\n"
            + rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count + 2) + $0.1 }.joined(separator: "\n") + "\n"
    }

    private static func seconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
