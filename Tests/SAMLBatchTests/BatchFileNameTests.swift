import CLITestSupport
import Foundation
import TestIdP
import Testing

/// File names are bytes: names that are not UTF-8 still open and never share a `source`, and
/// nothing in a name (or in a message quoting a document) can forge a line on standard error or
/// a formula in a spreadsheet.
@Suite("batch file names")
struct BatchFileNameTests {
    /// Creates `directory/name` from raw bytes (Foundation paths are strings).
    static func create(_ directory: String, _ name: [UInt8], _ contents: [UInt8]) throws {
        let path = Array(directory.utf8) + [UInt8(ascii: "/")] + name + [0]
        let fd = path.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644) } }
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == contents.count)
    }

    @Test("names that are not UTF-8, in a directory or as arguments: read, with distinct escaped sources")
    func nonUTF8Names() throws {
        let fixture = try BatchFixture()
        let tree = fixture.path("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        // Latin-1 "café" and another invalid byte: both would read "caf\u{FFFD}.xml" as text.
        try Self.create(tree, Array("caf".utf8) + [0xE9] + Array(".xml".utf8), BatchFixture.responses[0])
        try Self.create(tree, Array("caf".utf8) + [0xFF] + Array(".xml".utf8), BatchFixture.responses[1])
        try Self.create(tree, Array("caf\\xE9.xml".utf8), BatchFixture.responses[2])

        let result = try fixture.batch([tree])
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == [tree + "/caf\\x5CxE9.xml", tree + "/caf\\xE9.xml", tree + "/caf\\xFF.xml"])
        #expect(records.allSatisfy { BatchFixture.errorCode($0) == nil }, "\(result.stdoutText)")
        #expect(result.status == 0)

        // The same file named as an argument, to batch, encode and verify.
        let argument = Array(tree.utf8) + Array("/caf".utf8) + [0xE9] + Array(".xml".utf8)
        let batch = try SamlgateProcess.run(byteArguments: [Array("batch".utf8), Array("--progress".utf8), Array("none".utf8), argument])
        #expect(BatchFixture.records(batch).map { $0["source"] as? String } == [tree + "/caf\\xE9.xml"])
        #expect(BatchFixture.records(batch).first.map(BatchFixture.errorCode) == .some(nil), "\(batch.stdoutText)")
        // --out FILE with such a name (also spelled --out=FILE) is created under its bytes.
        for (index, spelling) in [["--out"], ["--out="]].enumerated() {
            let out = Array(tree.utf8) + Array("/../out\(index)".utf8) + [0xE9] + Array(".jsonl".utf8)
            let arguments = spelling == ["--out"] ? [Array("--out".utf8), out] : [Array("--out=".utf8) + out]
            let written = try SamlgateProcess.run(
                byteArguments: [Array("batch".utf8), Array("--progress".utf8), Array("none".utf8), argument] + arguments)
            #expect(written.status == 0, "\(written.stderr)")
            let fd = (out + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY) } }
            #expect(fd >= 0, "the output is not under the bytes it was named with")
            if fd >= 0 { close(fd) }
        }
        let encode = try SamlgateProcess.run(byteArguments: [Array("encode".utf8), argument])
        #expect(encode.status == 0, "\(encode.stderr)")
        #expect(encode.stdoutText == BatchFixture.encoded(BatchFixture.responses[0]) + "\n")
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let verify = try SamlgateProcess.run(byteArguments: [Array("verify".utf8), Array("--trust".utf8), Array(pem.utf8), argument])
        #expect(verify.status == 0, "\(verify.stdoutText) \(verify.stderr)")
        #expect(verify.stdoutText.contains(#""file":"\#(tree)/caf\\xE9.xml""#), "\(verify.stdoutText)")
    }

    @Test("a line break in a name never reaches standard error raw; a name cannot pose as a line locator")
    func lineBreakAndLocatorInNames() throws {
        let fixture = try BatchFixture()
        let forged = "x.xml\nsamlgate batch: passwd: unreadable_input: forged line"
        let broken = try fixture.write(forged, "not a response")
        let lookalike = try fixture.write("a.jsonl:1", BatchFixture.responses[0])
        let lines = try fixture.write("a.jsonl", BatchFixture.jsonLine("broken") + "\n")
        let result = try fixture.batch([broken, lines, lookalike])
        #expect(!result.stderr.contains("\nsamlgate batch: passwd"), "\(result.stderr)")
        #expect(result.stderr.contains("x.xml\\x0Asamlgate batch: "))
        #expect(!result.stderr.contains(forged))
        let sources = BatchFixture.records(result).compactMap { $0["source"] as? String }
        #expect(
            sources == [fixture.path("x.xml\\x0Asamlgate batch: passwd: unreadable_input: forged line"), "\(lines):1", fixture.path("a.jsonl\\x3A1")])
        #expect(Set(sources).count == 3)
        // encode reports the name escaped as well.
        let encode = try SamlgateProcess.run(["encode", "--detect", broken])
        #expect(encode.status == 1)
        #expect(!encode.stderr.contains("\nsamlgate batch: passwd"), "\(encode.stderr)")
        #expect(encode.stderr.contains("x.xml\\x0Asamlgate batch: "), "\(encode.stderr)")
    }

    @Test("a message quoting a forged document (a StatusCode holding a line break) is escaped on standard error")
    func messageQuotingTheDocument() throws {
        let fixture = try BatchFixture()
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        var options = IssueOptions(mvpd: BatchFixture.mvpd, user: "user@example.com")
        options.statusCode = "urn:placeholder"
        // Only the assertion is signed: the Response's status is the forger's to write.
        let xml = String(decoding: try BatchFixture.idp.issue(options), as: UTF8.self)
            .replacingOccurrences(of: "urn:placeholder", with: "urn:x&#10;samlgate batch: other.xml: valid")
        let file = try fixture.write("status.xml", xml)
        let result = try fixture.batch([file, "--verify", "--trust", pem])
        #expect(BatchFixture.errorCode(try #require(BatchFixture.records(result).first)) == "status_not_success")
        #expect(!result.stderr.contains("\nsamlgate batch: other.xml"), "\(result.stderr)")
        #expect(result.stderr.contains("urn:x\\x0Asamlgate batch: other.xml: valid"), "\(result.stderr)")
    }

    @Test("CSV: a cell starting with = + - @ is neutralised with a leading quote")
    func csvInjection() throws {
        let fixture = try BatchFixture()
        let name = #"=HYPERLINK("evil.example","x").xml"#
        try fixture.write(name, BatchFixture.responses[0])
        try fixture.write("@SUM(1+1).xml", BatchFixture.responses[1])
        let result = try SamlgateProcess.run(
            ["batch", "--progress", "none", "--format", "csv", name, "@SUM(1+1).xml"], directory: fixture.directory.path)
        let rows = result.stdoutText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 3, "\(result.stdoutText)")
        #expect(rows[1].hasPrefix(#""'=HYPERLINK(""evil.example"",""x"").xml",raw,"#), "\(rows[1])")
        #expect(rows[2].hasPrefix("'@SUM(1+1).xml,raw,"), "\(rows[2])")
    }
}
