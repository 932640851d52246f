import CLITestSupport
import Foundation
import Testing

/// `samlgate trust list` prints names that come from the trust store's files escaped: a file
/// name with a line break cannot forge a row of the table, an MVPD directory with a
/// right-to-left override cannot reorder it.
@Suite struct TrustListEscapingTests {
    @Test func aLineBreakOrBidiOverrideInANameIsEscapedInTheTable() throws {
        let (_, _, cert) = try VerifyCommandTests.keygen("p256")
        let store = TestScratch.directory("samlgate-escape-store")
        let entry = store.appendingPathComponent("Cable\u{202E}x")
        try FileManager.default.createDirectory(at: entry, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: cert, toPath: entry.appendingPathComponent("a\nForged  ready.pem").path)
        let result = try SamlgateProcess.run(["trust", "list", store.path])
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderr)")
        let rows = result.stdoutText.split(separator: "\n")
        #expect(rows.count == 2, "\(result.stdoutText)")
        #expect(!result.stdoutText.unicodeScalars.contains("\u{202E}"))
        #expect(rows.last?.contains(#"Cable\u{202e}x"#) == true)
        #expect(rows.last?.contains(#"a\nForged  ready.pem"#) == true)
        let json = try SamlgateProcess.run(["trust", "list", "--json", store.path])
        #expect(!json.stdoutText.unicodeScalars.contains("\u{202E}") && json.stdoutText.split(separator: "\n").count == 1)
    }
}
