import CLITestSupport
import Foundation
import Testing

/// Ordering, sharding, output targets and bounded memory.
@Suite("batch pipeline")
struct BatchParallelTests {
    /// A few thousand records of varied forms and sizes in a JSON Lines file and a directory.
    static func corpus(_ fixture: BatchFixture, lines count: Int = 2_000) throws -> [String] {
        var lines: [String] = []
        for i in 0..<count {
            let xml = BatchFixture.responses[i % BatchFixture.responses.count]
            let value: String
            switch i % 3 {
            case 0: value = String(decoding: xml, as: UTF8.self)
            case 1: value = BatchFixture.base64(xml)
            default: value = i % 97 == 0 ? "broken" : BatchFixture.encoded(xml)
            }
            lines.append(BatchFixture.jsonLine(value, ["id": i]))
        }
        let jsonl = try fixture.write("corpus.jsonl", lines.joined(separator: "\n") + "\n")
        for i in 0..<30 { try fixture.write("docs/\(String(format: "%03d", i)).xml", BatchFixture.responses[i % 6]) }
        return [jsonl, fixture.path("docs")]
    }

    @Test("output is identical and in input order whatever --jobs")
    func ordering() throws {
        let fixture = try BatchFixture()
        let inputs = try Self.corpus(fixture)
        let one = try fixture.batch(inputs + ["--jobs", "1"])
        let many = try fixture.batch(inputs + ["--jobs", "4"])
        #expect(one.status == 0 && many.status == 0)
        #expect(one.stdout == many.stdout)
        let records = BatchFixture.records(many)
        #expect(records.count == 2_030)
        let ids = records.prefix(2_000).compactMap { ($0["meta"] as? [String: Any])?["id"] as? Int }
        #expect(ids == Array(0..<2_000))
    }

    @Test("--shard I/N: the shards together hold every record exactly once")
    func sharding() throws {
        let fixture = try BatchFixture()
        let inputs = try Self.corpus(fixture, lines: 500)
        let all = BatchFixture.records(try fixture.batch(inputs)).map { $0["source"] as! String }
        var union: [String] = []
        for shard in 0..<3 {
            let part = BatchFixture.records(try fixture.batch(inputs + ["--shard", "\(shard)/3", "--jobs", "2"])).map { $0["source"] as! String }
            #expect(part == all.enumerated().filter { $0.offset % 3 == shard }.map(\.element))
            union += part
        }
        #expect(union.sorted() == all.sorted())
        #expect(Set(union).count == all.count)
    }

    @Test("--out FILE writes the records to the file; --out DIR one .encoded file per record; CSV has the same columns")
    func outputs() throws {
        let fixture = try BatchFixture()
        let a = try fixture.write("a.xml", BatchFixture.responses[0])
        let b = try fixture.write("b.jsonl", BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[1]), ["id": "x,\"y\""]) + "\n{}\n")
        let outFile = fixture.path("out.jsonl")
        let toFile = try fixture.batch([a, b, "--out", outFile])
        #expect(toFile.stdout.isEmpty)
        let written = try String(contentsOfFile: outFile, encoding: .utf8)
        #expect(written.split(separator: "\n").count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).allSatisfy { !$0.contains(".partial-") })

        let outDir = fixture.path("encoded")
        try FileManager.default.createDirectory(atPath: outDir, withIntermediateDirectories: true)
        let toDir = try fixture.batch([a, b, "--out", outDir])
        #expect(toDir.stdout.isEmpty)
        let files = try FileManager.default.contentsOfDirectory(atPath: outDir).sorted()
        #expect(files.count == 2, "the failed record has no file: \(files)")
        #expect(files[0].hasPrefix("00000001-") && files[0].hasSuffix(".encoded"))
        #expect(try String(contentsOfFile: outDir + "/" + files[0], encoding: .utf8) == BatchFixture.encoded(BatchFixture.responses[0]))
        #expect(try String(contentsOfFile: outDir + "/" + files[1], encoding: .utf8) == BatchFixture.encoded(BatchFixture.responses[1]))
        #expect(toDir.stderr.contains(":2: missing_field"))

        let csv = try fixture.batch([a, b, "--format", "csv"])
        let rows = csv.stdoutText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows[0] == "source,form,encoded,bytesIn,bytesOut,error,meta")
        #expect(rows.count == 4)
        #expect(rows[1].hasPrefix("\(a),raw,\(BatchFixture.encoded(BatchFixture.responses[0])),"))
        #expect(rows[2].contains(#""{""id"":""x,\""y\""""}""#))
        #expect(rows[3].contains("missing_field"))
    }

    @Test("memory stays bounded on an input much larger than the in-flight window")
    func boundedMemory() throws {
        let fixture = try BatchFixture()
        let line = BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[5]), ["id": 0]) + "\n"
        let path = fixture.path("large.jsonl")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let block = Data(String(repeating: line, count: 1_000).utf8)
        for _ in 0..<24 { handle.write(block) }  // about 270 MB
        try handle.close()
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let result = try fixture.batch([path, "--out", fixture.path("out.jsonl"), "--jobs", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let peak = result.stderr.split(separator: "\n").first { $0.contains("peak memory") }
        let mebibytes = peak.flatMap { $0.split(separator: " ").dropLast().last }.flatMap { Int($0) }
        #expect(mebibytes != nil)
        #expect((mebibytes ?? .max) < 160, "peak \(mebibytes ?? -1) MiB for a \(size / 1_000_000) MB input")
        #expect(size > 250_000_000)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.removeItem(atPath: fixture.path("out.jsonl"))
    }

    @Test("progress lines and the summary on standard error")
    func progressLines() throws {
        let fixture = try BatchFixture()
        let inputs = try Self.corpus(fixture, lines: 300)
        let result = try fixture.batch(inputs + ["--progress", "lines", "--status-interval", "0.1", "--jobs", "1"])
        #expect(result.stderr.contains("samlgate batch summary"))
        #expect(result.stderr.contains("throughput"))
        #expect(result.stderr.contains("failed"))
    }
}
