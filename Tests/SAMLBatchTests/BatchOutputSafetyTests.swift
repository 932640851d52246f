import CLITestSupport
import Foundation
import TestIdP
import Testing

/// Output written where operators replay it from, often shared directories: a forged response
/// never lands among the verified ones, and nobody can redirect a write with a planted link.
@Suite("batch output safety")
struct BatchOutputSafetyTests {
    @Test("--out DIR --verify writes files only for records that verify; the others are listed on standard error")
    func replayDirectoryHoldsOnlyVerifiedResponses() throws {
        let fixture = try BatchFixture()
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let attacker = try TestIdentityProvider(keyPair: try IdPKeyPair.generate(.rsa2048, commonName: "attacker"))
        var options = IssueOptions(mvpd: BatchFixture.mvpd, user: "mallory@example.com")
        options.ttl = 3600
        try fixture.write("in/1-genuine.xml", BatchFixture.responses[0])
        try fixture.write("in/2-forged.xml", try attacker.issue(options))
        try fixture.write("in/3-genuine.xml", BatchFixture.responses[1])
        let out = fixture.path("replay")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)

        let result = try fixture.batch([fixture.path("in"), "--out", out, "--verify", "--trust", pem])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files.count == 2, "\(files)")
        #expect(files.allSatisfy { $0.contains("genuine") })
        let first = try String(contentsOfFile: out + "/" + files[0], encoding: .utf8)
        #expect(first == BatchFixture.encoded(BatchFixture.responses[0]))
        #expect(result.stderr.contains("2-forged.xml: key_not_trusted") || result.stderr.contains("2-forged.xml: signature_invalid"))
        #expect(result.stderr.contains("valid"))
    }

    @Test("--out FILE never writes through a link planted at a temporary name it could use")
    func temporaryNameIsNotPredictable() throws {
        let fixture = try BatchFixture()
        let input = try fixture.write("a.xml", BatchFixture.responses[0])
        let victim = try fixture.write("victim.txt", "precious\n")
        // The next process ids: a link at every `.out.jsonl.partial-<pid>` samlgate could take
        // if the temporary name were predictable.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/bin/true")
        try probe.run()
        probe.waitUntilExit()
        let next = Int(probe.processIdentifier) + 1
        for pid in next..<(next + 3_000) {
            try FileManager.default.createSymbolicLink(atPath: fixture.path(".out.jsonl.partial-\(pid)"), withDestinationPath: victim)
        }
        let out = fixture.path("out.jsonl")
        let result = try fixture.batch([input, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        let records = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(records.count == 1)
        #expect(records.first?.contains(BatchFixture.encoded(BatchFixture.responses[0])) == true)
    }

    @Test("--out FILE replaces a link at the final name instead of writing through it")
    func finalNameLinkIsReplaced() throws {
        let fixture = try BatchFixture()
        let input = try fixture.write("a.xml", BatchFixture.responses[0])
        let victim = try fixture.write("victim.txt", "precious\n")
        let out = fixture.path("out.jsonl")
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: victim)
        let result = try fixture.batch([input, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect((try FileManager.default.attributesOfItem(atPath: out)[.type] as? FileAttributeType) == .typeRegular)
    }

    @Test("--out DIR replaces a link planted under a record's file name instead of writing through it")
    func directoryFileLinkIsReplaced() throws {
        let fixture = try BatchFixture()
        try fixture.write("in/a.xml", BatchFixture.responses[0])
        let victim = try fixture.write("victim.txt", "precious\n")
        let out = fixture.path("replay")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let name = "00000001-\(fixture.path("in/a.xml").replacingOccurrences(of: "/", with: "_")).encoded"
        try FileManager.default.createSymbolicLink(atPath: out + "/" + name, withDestinationPath: victim)
        let result = try fixture.batch([fixture.path("in"), "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try String(contentsOfFile: out + "/" + name, encoding: .utf8) == BatchFixture.encoded(BatchFixture.responses[0]))
        #expect((try FileManager.default.attributesOfItem(atPath: out + "/" + name)[.type] as? FileAttributeType) == .typeRegular)
    }
}
