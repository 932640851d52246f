import CLITestSupport
import Foundation
import TestIdP
import Testing

/// `--verify`: which captured responses are genuine, without the NameID leaving the process.
@Suite("batch verify")
struct BatchVerifyTests {
    @Test("genuine responses are valid; forged and tampered ones are not, and are still encoded")
    func verify() throws {
        let fixture = try BatchFixture()
        try fixture.write("trust/\(BatchFixture.mvpd)/idp.pem", BatchFixture.keyPair.certificatePEM)
        let attacker = try TestIdentityProvider(keyPair: try IdPKeyPair.generate(.rsa2048, commonName: "attacker"))
        var forgedOptions = IssueOptions(mvpd: BatchFixture.mvpd, user: "mallory@example.com")
        forgedOptions.ttl = 3600
        let forged = try attacker.issue(forgedOptions)
        let tampered = Array(
            String(decoding: BatchFixture.responses[1], as: UTF8.self)
                .replacingOccurrences(of: "user1@example.com", with: "admin@example.com").utf8)
        let lines = [
            BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[0]), ["mvpd": BatchFixture.mvpd]),
            BatchFixture.jsonLine(BatchFixture.base64(forged)),
            BatchFixture.jsonLine(BatchFixture.base64(tampered)),
            BatchFixture.jsonLine("garbage"),
        ]
        let file = try fixture.write("v.jsonl", lines.joined(separator: "\n") + "\n")
        let result = try fixture.batch([file, "--verify", "--trust-store", fixture.path("trust")])
        let records = BatchFixture.records(result)
        #expect(records.map { $0["valid"] as? Bool } == [true, false, false, false])
        #expect(
            records.map(BatchFixture.errorCode) == [nil, "key_not_trusted", "signature_invalid", "unrecognized_saml_form"]
                || records.map(BatchFixture.errorCode) == [nil, "signature_invalid", "signature_invalid", "unrecognized_saml_form"])
        #expect(records[0]["issuer"] as? String != nil)
        #expect(records[0]["nameIDHash"] as? String == sha256Hex("user0@example.com"))
        #expect(records[0]["notOnOrAfter"] as? String != nil)
        #expect(records[0]["survivesNormalization"] is Bool)
        #expect(records[1]["encoded"] as? String == BatchFixture.encoded(forged), "a response that does not verify is still re-encoded")
        #expect(!result.stdoutText.contains("user0@example.com") && !result.stderr.contains("user0@example.com"))
        #expect(result.stderr.contains("valid"))

        let strict = try fixture.batch([file, "--verify", "--trust", fixture.path("trust/\(BatchFixture.mvpd)/idp.pem"), "--fail-on-error"])
        #expect(strict.status == 1)
        #expect(BatchFixture.records(strict).map { $0["valid"] as? Bool } == [true, false, false, false])
    }

    @Test("nameIDHash is the NameID's hash byte for byte: NameIDs that differ by a blank hash apart")
    func nameIDHashByteForByte() throws {
        let fixture = try BatchFixture()
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let users = ["user@example.com", "user@example.com ", " user@example.com", " "]
        let lines = try users.map { user in
            var options = IssueOptions(mvpd: BatchFixture.mvpd, user: user)
            options.ttl = 3600
            return BatchFixture.jsonLine(BatchFixture.base64(try BatchFixture.idp.issue(options)), ["mvpd": BatchFixture.mvpd])
        }
        let file = try fixture.write("blanks.jsonl", lines.joined(separator: "\n") + "\n")
        let records = BatchFixture.records(try fixture.batch([file, "--verify", "--trust", pem]))
        #expect(records.map { $0["valid"] as? Bool } == [true, true, true, true])
        #expect(records.map { $0["nameIDHash"] as? String } == users.map(sha256Hex))
    }

    @Test("the verdict covers the encoded value: markup that normalization reveals is not valid")
    func verdictCoversTheEncodedValue() throws {
        let fixture = try BatchFixture()
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let genuine = String(decoding: BatchFixture.responses[0], as: UTF8.self)
        let hidden = "<!--x-\n-><saml:NameID>admin@victim.example</saml:NameID><!-\n-y-->"
        let smuggled = try fixture.write("s.xml", genuine.replacingFirst("</saml:NameID>", with: "</saml:NameID>" + hidden))
        let result = try fixture.batch([smuggled, "--verify", "--trust", pem])
        let record = try #require(BatchFixture.records(result).first)
        #expect(record["valid"] as? Bool == false)
        #expect(BatchFixture.errorCode(record) == "normalization_changes_document")
    }

    @Test("with --verify, invalid UTF-8 is still reported as such, before any verification, and the record is not valid")
    func invalidUTF8UnderVerify() throws {
        let fixture = try BatchFixture()
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        var invalidUTF8 = BatchFixture.responses[0]
        invalidUTF8.insert(contentsOf: [0xC3, 0x28], at: invalidUTF8.count - 20)
        let file = try fixture.write("bad.jsonl", BatchFixture.jsonLine(BatchFixture.base64(invalidUTF8), ["id": 1]) + "\n")
        let result = try fixture.batch([file, "--verify", "--trust", pem])
        let record = try #require(BatchFixture.records(result).first)
        #expect(BatchFixture.errorCode(record) == "invalid_utf8")
        #expect(record["valid"] as? Bool == false)
        #expect(record["encoded"] is NSNull)
    }

    @Test("--now judges validity windows at another instant")
    func now() throws {
        let fixture = try BatchFixture()
        let file = try fixture.write("a.xml", BatchFixture.responses[0])
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let later = try fixture.batch([file, "--verify", "--trust", pem, "--now", "2099-01-01T00:00:00Z"])
        #expect(BatchFixture.errorCode(BatchFixture.records(later)[0]) == "expired")
        let current = try fixture.batch([file, "--verify", "--trust", pem])
        #expect(BatchFixture.records(current)[0]["valid"] as? Bool == true)
    }

    @Test("several MVPDs and a record naming none: unknown_mvpd")
    func unknownMVPD() throws {
        let fixture = try BatchFixture()
        try fixture.write("trust/\(BatchFixture.mvpd)/idp.pem", BatchFixture.keyPair.certificatePEM)
        try fixture.write("trust/Other/idp.pem", BatchFixture.keyPair.certificatePEM)
        // One key for two MVPDs: each needs an issuer binding (the trust store refuses it otherwise).
        try fixture.write("trust/\(BatchFixture.mvpd)/issuer", "https://idp.batch_mvpd.example.com/saml2/idp")
        try fixture.write("trust/Other/issuer", "https://idp.other.example.com/saml2/idp")
        let file = try fixture.write("a.xml", BatchFixture.responses[0])
        let result = try fixture.batch([file, "--verify", "--trust-store", fixture.path("trust")])
        #expect(BatchFixture.errorCode(BatchFixture.records(result)[0]) == "unknown_mvpd")
        let named = try fixture.batch([file, "--verify", "--trust-store", fixture.path("trust"), "--mvpd", BatchFixture.mvpd])
        #expect(BatchFixture.records(named)[0]["valid"] as? Bool == true)
    }

    private func sha256Hex(_ text: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }
}
