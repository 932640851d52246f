import CLITestSupport
import Foundation
import Testing

/// Nothing in an input is dropped without a word: what is not read is a reported record with a
/// code, counted in the summary.
@Suite("batch reports what it does not read")
struct BatchSilentDropTests {
    @Test("data after the last gzip member is trailing_gzip_data; the records before it are kept")
    func gzipTrailingData() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.base64(BatchFixture.responses[0])
        try fixture.write("lines.jsonl", BatchFixture.jsonLine(value) + "\n" + BatchFixture.jsonLine(value) + "\n")
        try fixture.write("doc.xml", BatchFixture.responses[1])
        let garbage = Array("{\"SAMLResponse\":\"appended\"}\n".utf8)
        let lines = try fixture.write("lines.jsonl.gz", try Array(Data(contentsOf: URL(fileURLWithPath: try fixture.gzip("lines.jsonl")))) + garbage)
        let doc = try fixture.write("doc.xml.gz", try Array(Data(contentsOf: URL(fileURLWithPath: try fixture.gzip("doc.xml")))) + garbage)
        let result = try fixture.batch([lines, doc])
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(lines):1", "\(lines):2", "\(lines):3", doc])
        #expect(records.map(BatchFixture.errorCode) == [nil, nil, "trailing_gzip_data", "trailing_gzip_data"])
        #expect(result.stderr.contains("trailing_gzip_data"))
        #expect(result.stderr.range(of: #"trailing_gzip_data\s+2"#, options: .regularExpression) != nil, "\(result.stderr)")
    }

    @Test("dangling links, link loops, FIFOs and links to directories inside a directory are reported and counted")
    func specialDirectoryEntries() throws {
        let fixture = try BatchFixture()
        let tree = fixture.path("tree")
        try fixture.write("tree/a-good.xml", BatchFixture.responses[0])
        try fixture.write("elsewhere/b.xml", BatchFixture.responses[1])
        let manager = FileManager.default
        try manager.createSymbolicLink(atPath: tree + "/b-dangling.xml", withDestinationPath: fixture.path("nothing.xml"))
        try manager.createSymbolicLink(atPath: tree + "/c-loop.xml", withDestinationPath: tree + "/c-loop.xml")
        #expect(mkfifo(tree + "/d-fifo.xml", 0o644) == 0)
        try manager.createSymbolicLink(atPath: tree + "/e-dirlink", withDestinationPath: fixture.path("elsewhere"))
        try manager.createSymbolicLink(atPath: tree + "/f-link.xml", withDestinationPath: fixture.path("elsewhere/b.xml"))

        let result = try SamlgateProcess.run(["batch", "--progress", "none", tree], timeout: 20)
        let records = BatchFixture.records(result)
        #expect(
            records.map { $0["source"] as? String }
                == ["a-good.xml", "b-dangling.xml", "c-loop.xml", "d-fifo.xml", "e-dirlink", "f-link.xml"].map { tree + "/" + $0 })
        #expect(records.map(BatchFixture.errorCode) == [nil, "unreadable_input", "unreadable_input", "skipped_input", "skipped_input", nil])
        #expect(result.status == 1, "an unreadable input makes the exit status 1")
        for needle in ["dangling", "loop", "FIFO", "link to a directory"] { #expect(result.stderr.contains(needle), "\(needle)") }
        #expect(result.stderr.range(of: #"skipped_input\s+2"#, options: .regularExpression) != nil, "\(result.stderr)")
        #expect(result.stderr.range(of: #"unreadable inputs\s+2"#, options: .regularExpression) != nil, "\(result.stderr)")

        // --glob filters them like any other name.
        let filtered = try SamlgateProcess.run(["batch", "--progress", "none", tree, "--glob", "a-*"], timeout: 20)
        #expect(BatchFixture.records(filtered).count == 1)
        #expect(filtered.status == 0)
    }
}
