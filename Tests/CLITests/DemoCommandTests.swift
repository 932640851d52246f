import CLITestSupport
import Foundation
import Testing

/// `samlgate demo` as a real process.
@Suite("samlgate demo")
struct DemoCommandTests {
    @Test("on a fresh checkout, one command walks both flows and every scenario; exit 0")
    func all() throws {
        let result = try SamlgateProcess.run(["demo"])
        #expect(result.status == 0, "\(result.stdoutText)\n\(result.stderr)")
        let text = result.stdoutText
        #expect(text.contains("all 100 steps as the cookbook says"), "\(text)")
        for line in [
            "POST /api/v1/tokens/authn", "tokenSource=Apple", "actionName=partner_profile",
            "Cablevision=appleSSO", "code=invalid_header_pfs_permission_access_not_granted", "actionName=partner_logout",
        ] {
            #expect(text.contains(line), "transcript lacks \(line)")
        }
        #expect(!text.contains("demo-user@example.com"), "the NameID never reaches the transcript")
    }

    @Test("usage errors exit 2; an unreachable gateway fails the steps with exit 1")
    func failures() throws {
        #expect(try SamlgateProcess.run(["demo", "--flow", "v3"]).status == 2)
        #expect(try SamlgateProcess.run(["demo", "--scenario", "sunny"]).status == 2)
        #expect(try SamlgateProcess.run(["demo", "--gateway", "http://127.0.0.1:1"]).status == 2)
        let idp = TestScratch.directory("demo-idp").path
        #expect(try SamlgateProcess.run(["idp", "keygen", "--out", idp]).status == 0)
        let down = try SamlgateProcess.run(["demo", "--gateway", "http://127.0.0.1:1", "--idp", idp, "--flow", "v1", "--scenario", "happy"])
        #expect(down.status == 1)
        #expect(down.stdoutText.contains("FAIL"))
        #expect(down.stdoutText.contains("no answer"))
        let noKey = try SamlgateProcess.run(["demo", "--gateway", "http://127.0.0.1:1", "--idp", "/nonexistent"])
        #expect(noKey.status == 1)
        #expect(noKey.stderr.contains("key.pem"))
    }
}
