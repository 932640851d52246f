import CLITestSupport
import Foundation
import Testing

/// `samlgate verify` run on hostile captured data: what a response carries is printed escaped
/// (no control, C1 or bidi character reaches the terminal as is), and an input too long to
/// decode to an acceptable document is refused after a bounded read while the others go on.
@Suite struct VerifyOutputSafetyTests {
    /// A NameID with a right-to-left override, an isolate, CSI (C1) and DEL comes out as `\u` escapes in the
    /// raw line and reads back unchanged once the JSON is parsed.
    @Test func controlAndBidiCharactersInAValueAreEscaped() throws {
        let (_, key, cert) = try VerifyCommandTests.keygen("p256")
        let user = "alice\u{202E}moc.elpmaxe\u{2066}@\u{9B}x\u{7F}"
        let issued = try SamlgateProcess.run(["idp", "issue", "--key", key, "--cert", cert, "--mvpd", "Cablevision", "--user", user])
        #expect(issued.status == 0, "\(issued.stderr)")
        let file = try SamlgateProcess.temporaryFile("bidi.xml", issued.stdout)
        let result = try SamlgateProcess.run(["verify", "--trust", cert, file])
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderr)")
        for scalar in ["\u{202E}", "\u{2066}", "\u{9B}", "\u{7F}"] as [Unicode.Scalar] {
            #expect(!result.stdoutText.unicodeScalars.contains(scalar), "raw U+\(String(scalar.value, radix: 16)) in output")
        }
        #expect(result.stdoutText.contains(#"\u202e"#) && result.stdoutText.contains(#"\u009b"#))
        #expect(result.stdoutText.split(separator: "\n").count == 1)
        let line = try #require(try VerifyCommandTests.lines(result).first)
        #expect(line["nameID"] as? String == user)
    }

    /// A 1.5 GB (sparse) file and an endless device are refused with `too_large` without being
    /// read whole; the genuine response after them still verifies.
    @Test func anInputOverTheLimitIsRefusedAndTheRunGoesOn() throws {
        let (_, key, cert) = try VerifyCommandTests.keygen("p256")
        let genuine = try VerifyCommandTests.issue(key, cert)
        let huge = try SamlgateProcess.temporaryFile("huge.xml", Data("<x/>".utf8))
        #expect(truncate(huge, 1_500_000_000) == 0)
        let result = try SamlgateProcess.run(["verify", "--trust", cert, huge, "/dev/zero", genuine], timeout: 60)
        #expect(result.status == 1)
        let lines = try VerifyCommandTests.lines(result)
        #expect(lines.count == 3)
        for line in lines.prefix(2) {
            let error = line["error"] as? [String: Any]
            #expect(error?["code"] as? String == "too_large")
            #expect((error?["message"] as? String)?.contains("4194304") == true)
        }
        #expect(lines.last?["valid"] as? Bool == true)
    }
}
