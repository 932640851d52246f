import CLITestSupport
import Foundation
import Testing

/// Bad records are reported with their location and code and never stop the run.
@Suite("batch failures")
struct BatchFailureTests {
    @Test("bad base64, invalid UTF-8, broken XML and bad JSON are reported and skipped; good records still come out")
    func badRecords() throws {
        let fixture = try BatchFixture()
        let good = BatchFixture.responses[0]
        var invalidUTF8 = good
        invalidUTF8.insert(contentsOf: [0xC3, 0x28], at: good.count - 20)
        let truncatedXML = Array(BatchFixture.responses[1].prefix(BatchFixture.responses[1].count - 40))
        let lines = [
            BatchFixture.jsonLine(BatchFixture.base64(good), ["id": 1]),
            // A character dropped from the middle: the length is no longer a multiple of 4.
            BatchFixture.jsonLine(
                {
                    var b = BatchFixture.base64(good)
                    b.remove(at: b.index(b.startIndex, offsetBy: 100))
                    return b
                }(), ["id": 2]),
            BatchFixture.jsonLine(BatchFixture.base64(invalidUTF8), ["id": 3]),
            BatchFixture.jsonLine(BatchFixture.base64(truncatedXML), ["id": 4]),
            "{\"id\": 5, \"SAMLResponse\": ",
            "{\"id\": 6}",
            BatchFixture.jsonLine(BatchFixture.encoded(good).replacingOccurrences(of: "%2B", with: "%252B"), ["id": 7]),
            BatchFixture.jsonLine(BatchFixture.base64(good), ["id": 8]),
        ]
        let file = try fixture.write("bad.jsonl", lines.joined(separator: "\n") + "\n")
        let result = try fixture.batch([file])
        #expect(result.status == 0, "bad records alone do not fail the run without --fail-on-error")
        let records = BatchFixture.records(result)
        #expect(records.count == 8)
        #expect(
            records.map(BatchFixture.errorCode) == [
                nil, "malformed_base64", "invalid_utf8", "malformed_xml", "invalid_json", "missing_field", "double_encoded", nil,
            ])
        #expect(records[7]["encoded"] as? String == BatchFixture.encoded(good))
        #expect(records[1]["encoded"] is NSNull)
        #expect(result.stderr.contains("\(file):2: malformed_base64"))
        #expect(result.stderr.contains("\(file):4: malformed_xml"))
        #expect(result.stderr.contains("malformed_base64") && result.stderr.contains("failed"))

        let strict = try fixture.batch([file, "--fail-on-error"])
        #expect(strict.status == 1)
        #expect(strict.stdout == result.stdout)
    }

    @Test("broken XML documents: truncated, mismatched tags, text after the root")
    func brokenXML() throws {
        let fixture = try BatchFixture()
        let xml = String(decoding: BatchFixture.responses[1], as: UTF8.self)
        let cases = [
            String(xml.dropLast(30)),
            xml.replacingOccurrences(of: "</saml:Issuer>", with: "</saml:Isuer>"),
            xml + "trailing text",
            "<a><b></a></b>",
            "<a attr=\"unterminated></a>",
        ]
        var paths: [String] = []
        for (i, text) in cases.enumerated() { paths.append(try fixture.write("broken\(i).xml", text)) }
        let result = try fixture.batch(paths)
        let records = BatchFixture.records(result)
        #expect(records.map(BatchFixture.errorCode) == Array(repeating: "malformed_xml", count: cases.count), "\(result.stdoutText)")
    }

    @Test("a truncated gzip keeps the records before the cut and reports the cut")
    func truncatedGzip() throws {
        let fixture = try BatchFixture()
        let lines = (0..<40).map { BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[$0 % 6]), ["id": $0]) }
        try fixture.write("big.jsonl", lines.joined(separator: "\n") + "\n")
        let gz = try fixture.gzip("big.jsonl")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: gz))
        let cut = try fixture.write("cut.jsonl.gz", [UInt8](bytes.prefix(bytes.count / 2)))
        let after = try fixture.write("after.xml", BatchFixture.responses[0])
        let result = try fixture.batch([cut, after])
        let records = BatchFixture.records(result)
        let last = records[records.count - 2]
        #expect(BatchFixture.errorCode(last) == "truncated_gzip")
        #expect(records.count > 3 && records.count < 42)
        #expect(records.dropLast(2).allSatisfy { BatchFixture.errorCode($0) == nil })
        #expect(records.last?["source"] as? String == after, "the next input is still read")
        #expect(BatchFixture.errorCode(records.last!) == nil)
    }

    @Test("a damaged gzip stream is corrupt_gzip; the next input is still read")
    func corruptGzip() throws {
        let fixture = try BatchFixture()
        try fixture.write("doc.xml", BatchFixture.responses[0])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try fixture.gzip("doc.xml"))))
        for i in 20..<60 { bytes[i] ^= 0x5A }  // inside the deflate data, past the header
        let damaged = try fixture.write("damaged.xml.gz", bytes)
        let after = try fixture.write("after.xml", BatchFixture.responses[1])
        let records = BatchFixture.records(try fixture.batch([damaged, after]))
        #expect(records.map(BatchFixture.errorCode) == ["corrupt_gzip", nil])
        #expect(records.first?["source"] as? String == damaged)
    }

    @Test("an output file that cannot be written is output_failed with exit status 1")
    func outputFailed() throws {
        let fixture = try BatchFixture()
        let input = try fixture.write("a.xml", BatchFixture.responses[0])
        let result = try fixture.batch([input, "--out", fixture.path("no-such-dir/out.jsonl")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("output_failed"))
    }

    @Test("a HAR without SAML is one reported record; broken HAR JSON is reported at its entry")
    func harWithoutSAML() throws {
        let fixture = try BatchFixture()
        let empty = try fixture.write(
            "plain.har", "{\"log\":{\"version\":\"1.2\",\"entries\":[{\"request\":{\"method\":\"GET\",\"url\":\"https://x/\"}}]}}")
        let broken = try fixture.write("broken.har", "{\"log\":{\"entries\":[{\"request\":{\"method\":\"GET\",\"url\":\"https://x/\"}},{\"request\":")
        let result = try fixture.batch([empty, broken])
        let records = BatchFixture.records(result)
        #expect(records.count == 2)
        #expect(records[0]["source"] as? String == empty)
        #expect(BatchFixture.errorCode(records[0]) == "har_without_saml")
        #expect(records[1]["source"] as? String == "\(broken)#2")
        #expect(BatchFixture.errorCode(records[1]) == "invalid_json")
        #expect(result.status == 0)
    }

    @Test("an unreadable input is reported, the others are processed, exit status 1")
    func unreadableInput() throws {
        let fixture = try BatchFixture()
        let good = try fixture.write("good.xml", BatchFixture.responses[0])
        let missing = fixture.path("missing.xml")
        let locked = try fixture.write("locked.xml", BatchFixture.responses[0])
        chmod(locked, 0)
        defer { chmod(locked, 0o644) }
        let result = try fixture.batch([missing, good, locked])
        #expect(result.status == 1)
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == [missing, good, locked])
        #expect(BatchFixture.errorCode(records[0]) == "unreadable_input")
        #expect(BatchFixture.errorCode(records[1]) == nil)
        // Root reads anything: the permission case only applies to other users.
        if getuid() != 0 { #expect(BatchFixture.errorCode(records[2]) == "unreadable_input") }
        #expect(result.stderr.contains("\(missing): could not be read"))
    }

    @Test("a record over --max-record-bytes is reported, not read")
    func recordTooLarge() throws {
        let fixture = try BatchFixture()
        let big = try fixture.write("big.xml", BatchFixture.responses[5])
        let lines = try fixture.write(
            "l.jsonl",
            BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[5])) + "\n"
                + BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[0])) + "\n")
        let result = try fixture.batch([big, lines, "--max-record-bytes", "7000"])
        let records = BatchFixture.records(result)
        #expect(records.map(BatchFixture.errorCode) == ["record_too_large", "record_too_large", nil])
    }

    @Test("usage errors exit with 2")
    func usageErrors() throws {
        let fixture = try BatchFixture()
        let file = try fixture.write("a.xml", BatchFixture.responses[0])
        for arguments in [
            [String](), [file, "--format", "xml"], [file, "--shard", "3/3"], [file, "--shard", "x"], [file, "--verify"],
            [file, "--trust-store", "/nonexistent"], [file, "--jobs", "0"], [file, "--verify", "--trust", "/nonexistent.pem"],
        ] {
            let result = try fixture.batch(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
        }
    }
}
