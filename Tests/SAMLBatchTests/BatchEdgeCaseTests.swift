import CLITestSupport
import Foundation
import Testing

/// Captures as real tools write them: byte-order marks, sloppy JSON, unrelated request bodies,
/// output written into an input directory.
@Suite("batch edge cases")
struct BatchEdgeCaseTests {
    @Test("every output line is valid JSON even when a carried field is not (bad escape, raw control byte)")
    func invalidCarriedFields() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.base64(BatchFixture.responses[0])
        let lines = [
            "{\"SAMLResponse\":\"\(value)\",\"path\":\"C:\\Users\\x\"}",
            "{\"SAMLResponse\":\"\(value)\",\"note\":\"tab\there\"}",
            "{\"SAMLResponse\":\"\(value)\",\"lone\":\"caf\\u00e9 \\ud83d\"}",
            "{\"SAMLResponse\":\"\(value)\",\"ok\":\"caf\\u00e9 \\ud83d\\ude00\"}",
        ]
        let file = try fixture.write("sloppy.jsonl", lines.joined(separator: "\n") + "\n")
        let result = try fixture.batch([file])
        let outputLines = result.stdoutText.split(separator: "\n")
        #expect(outputLines.count == 4)
        for line in outputLines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line.prefix(120))")
        }
        let records = BatchFixture.records(result)
        #expect(records.map(BatchFixture.errorCode) == ["invalid_json", "invalid_json", "invalid_json", nil])
    }

    @Test("a byte-order mark before a HAR file or JSON Lines loses nothing")
    func byteOrderMark() throws {
        let fixture = try BatchFixture()
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let value = BatchFixture.encoded(BatchFixture.responses[1])
        let har =
            "{\"log\":{\"entries\":[{\"request\":{\"method\":\"POST\",\"url\":\"https://a/api/v1/tokens/authn\",\"postData\":{\"text\":\"SAMLResponse=\(value)\"}}}]}}"
        let harFile = try fixture.write("bom.har", bom + Array(har.utf8))
        let jsonlFile = try fixture.write("bom.jsonl", bom + Array((BatchFixture.jsonLine(value) + "\n").utf8))
        let result = try fixture.batch([harFile, jsonlFile])
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(harFile)#1", "\(jsonlFile):1"])
        #expect(records.allSatisfy { BatchFixture.errorCode($0) == nil })
    }

    @Test("HAR requests with unrelated bodies (JSON, stray '%') are not records")
    func unrelatedHARBodies() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.encoded(BatchFixture.responses[2])
        let entries = [
            "{\"request\":{\"method\":\"POST\",\"url\":\"https://a/track?p=100%\",\"postData\":{\"text\":\"{\\\"progress\\\":\\\"100%\\\"}\"}}}",
            "{\"request\":{\"method\":\"POST\",\"url\":\"https://a/api/v1/tokens/authn\",\"postData\":{\"text\":\"x=5%&SAMLResponse=\(value)\"}}}",
        ]
        let file = try fixture.write("mixed.har", "{\"log\":{\"entries\":[\(entries.joined(separator: ","))]}}")
        let result = try fixture.batch([file])
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(file)#2"])
        #expect(records.first?["encoded"] as? String == value)
    }

    @Test("--out FILE inside an input directory does not read its own output")
    func outputInsideInput() throws {
        let fixture = try BatchFixture()
        for i in 0..<300 { try fixture.write("caps/\(String(format: "%03d", i)).xml", BatchFixture.responses[i % 6]) }
        let out = fixture.path("caps/result.jsonl")
        let result = try fixture.batch([fixture.path("caps"), "--out", out, "--jobs", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 300)
        #expect(!lines.contains { $0.contains("missing_field") || $0.contains("invalid_json") })
    }

    @Test("zero padding after the last gzip member is ignored")
    func gzipPadding() throws {
        let fixture = try BatchFixture()
        try fixture.write("doc.xml", BatchFixture.responses[3])
        let gz = try fixture.gzip("doc.xml")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: gz)))
        bytes += [UInt8](repeating: 0, count: 512)
        let padded = try fixture.write("padded.xml.gz", bytes)
        let records = BatchFixture.records(try fixture.batch([padded]))
        #expect(records.count == 1)
        #expect(records.first?["encoded"] as? String == BatchFixture.encoded(BatchFixture.responses[3]))
    }
}
