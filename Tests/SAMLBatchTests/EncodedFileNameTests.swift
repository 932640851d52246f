import Testing

@testable import SAMLBatch

/// The file name of a record written to `--out DIR`: index, then the end of the source.
@Suite("encoded file names")
struct EncodedFileNameTests {
    @Test("a long source keeps its last 200 bytes, cut at a whole character")
    func longSource() {
        // 20 + 450 + 6 = 476 bytes: dropping 276 lands inside a 3-byte "€", so the cut rounds up
        // to the next whole character and keeps 198 bytes.
        let path = String(repeating: "é", count: 10) + String(repeating: "€", count: 150) + "/end.x"
        let record = BatchRecord(index: 6, source: RecordSource(path: path, locator: .whole), payload: 0..<0, meta: "")
        let name = EncodedFileWriter.fileName(for: record)
        #expect(name.hasPrefix("00000007-"))
        #expect(name.hasSuffix("€€_end.x.encoded"))
        let kept = name.dropFirst("00000007-".count).dropLast(".encoded".count)
        #expect(kept.utf8.count == 198, "\(kept.utf8.count)")
        #expect(kept.first == "€")
    }

    @Test("a short source is kept whole")
    func shortSource() {
        let record = BatchRecord(index: 0, source: RecordSource(path: "in/a.xml", locator: .line(3)), payload: 0..<0, meta: "")
        #expect(EncodedFileWriter.fileName(for: record) == "00000001-in_a.xml:3.encoded")
    }
}
