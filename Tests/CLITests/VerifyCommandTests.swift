import CLITestSupport
import Foundation
import Testing

/// `samlgate idp` and `samlgate verify` through the real executable.
@Suite struct VerifyCommandTests {
    /// A fresh IdP made with `samlgate idp keygen`: returns (directory, key path, cert path).
    static func keygen(_ alg: String) throws -> (String, String, String) {
        let dir = TestScratch.directory("samlgate-idp").path
        let result = try SamlgateProcess.run(["idp", "keygen", "--out", dir, "--alg", alg])
        #expect(result.status == 0, "\(result.stderr)")
        return (dir, dir + "/key.pem", dir + "/cert.pem")
    }

    static func issue(_ key: String, _ cert: String, _ extra: [String] = []) throws -> String {
        let result = try SamlgateProcess.run(
            [
                "idp", "issue", "--key", key, "--cert", cert, "--mvpd", "Cablevision", "--user", "alice@example.com",
                "--attr", "zip=10001", "--attr", "zip=10002", "--attr", "userID=u-1",
            ] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("<?xml"))
        return try SamlgateProcess.temporaryFile("response.xml", result.stdout)
    }

    static func lines(_ result: SamlgateProcess) throws -> [[String: Any]] {
        try result.stdoutText.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    @Test(arguments: [("rsa2048", "assertion"), ("rsa2048", "response"), ("p256", "both")])
    func issuedResponsesVerify(_ alg: String, _ sign: String) throws {
        let (_, key, cert) = try Self.keygen(alg)
        let file = try Self.issue(key, cert, ["--sign", sign])
        let result = try SamlgateProcess.run(["verify", "--trust", cert, file])
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderr)")
        let line = try #require(try Self.lines(result).first)
        #expect(line["file"] as? String == file)
        #expect(line["valid"] as? Bool == true)
        #expect(line["error"] is NSNull)
        #expect(line["nameID"] as? String == "alice@example.com")
        #expect(line["signed"] as? String == sign)
        #expect((line["attributes"] as? [String: [String]])?["zip"] == ["10001", "10002"])
        #expect(line["notOnOrAfter"] is String)
    }

    @Test func encodedAndBase64InputsVerifyAndABadFileDoesNotStopTheRun() throws {
        let (_, key, cert) = try Self.keygen("rsa2048")
        let raw = try Self.issue(key, cert)
        let encoded = try SamlgateProcess.run(["encode", raw]).stdout
        let encodedFile = try SamlgateProcess.temporaryFile("r.enc", encoded)
        let tampered = try String(contentsOfFile: raw, encoding: .utf8).replacingOccurrences(of: "alice@", with: "mallory@")
        let tamperedFile = try SamlgateProcess.temporaryFile("t.xml", Data(tampered.utf8))
        let result = try SamlgateProcess.run(["verify", "--no-replay-check", "--trust", cert, tamperedFile, encodedFile, "/nonexistent.xml", raw])
        #expect(result.status == 1)
        let lines = try Self.lines(result)
        #expect(lines.count == 4)
        #expect((lines[0]["error"] as? [String: Any])?["code"] as? String == "signature_invalid")
        #expect(lines[1]["valid"] as? Bool == true)
        #expect((lines[2]["error"] as? [String: Any])?["code"] as? String == "unreadable_input")
        #expect(lines[3]["valid"] as? Bool == true)
    }

    @Test func replayWithinARunIsRejected() throws {
        let (_, key, cert) = try Self.keygen("p256")
        let file = try Self.issue(key, cert)
        let result = try SamlgateProcess.run(["verify", "--trust", cert, file, file])
        #expect(result.status == 1)
        let lines = try Self.lines(result)
        #expect(lines[0]["valid"] as? Bool == true)
        #expect((lines[1]["error"] as? [String: Any])?["code"] as? String == "replayed")
    }

    @Test func anotherIdPsKeyIsNotTrusted() throws {
        let (_, key, _) = try Self.keygen("rsa2048")
        let (_, _, otherCert) = try Self.keygen("rsa2048")
        let file = try Self.issue(key, otherCert)  // KeyInfo carries a certificate the verifier does not trust
        let (_, _, trusted) = try Self.keygen("rsa2048")
        let result = try SamlgateProcess.run(["verify", "--trust", trusted, file])
        #expect(result.status == 1)
        let code = (try Self.lines(result).first?["error"] as? [String: Any])?["code"] as? String
        #expect(code == "signature_invalid" || code == "key_not_trusted")
    }

    @Test func trustStoreWithIssuerAndAudience() throws {
        let (_, key, cert) = try Self.keygen("rsa2048")
        let store = TestScratch.directory("samlgate-store")
        let mvpdDir = store.appendingPathComponent("Cablevision")
        try FileManager.default.createDirectory(at: mvpdDir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: cert, toPath: mvpdDir.appendingPathComponent("idp.pem").path)
        try Data("https://idp.someone-else.example\n".utf8).write(to: mvpdDir.appendingPathComponent("issuer"))
        let file = try Self.issue(key, cert)
        let mismatch = try SamlgateProcess.run(["verify", "--trust-store", store.path, "--mvpd", "Cablevision", file])
        #expect((try Self.lines(mismatch).first?["error"] as? [String: Any])?["code"] as? String == "issuer_mismatch")
        let audience = try SamlgateProcess.run(["verify", "--trust", cert, "--audience", "https://other.example", file])
        #expect((try Self.lines(audience).first?["error"] as? [String: Any])?["code"] as? String == "wrong_audience")
        let unknown = try SamlgateProcess.run(["verify", "--trust-store", store.path, "--mvpd", "Nope", file])
        #expect((try Self.lines(unknown).first?["error"] as? [String: Any])?["code"] as? String == "unknown_mvpd")
    }

    @Test func idpFailuresAreReportedWithTheirCodes() throws {
        let issue = try SamlgateProcess.run([
            "idp", "issue", "--key", "/nonexistent/key.pem", "--cert", "/nonexistent/cert.pem",
            "--mvpd", "m", "--user", "u",
        ])
        #expect(issue.status == 1)
        #expect(issue.stderr.contains("samlgate: /nonexistent/key.pem: issue_failed:"))
        let blocker = try SamlgateProcess.temporaryFile("not-a-directory", Data("x".utf8))
        let keygen = try SamlgateProcess.run(["idp", "keygen", "--out", blocker + "/sub"])
        #expect(keygen.status == 1)
        #expect(keygen.stderr.contains("keygen_failed:"))
    }

    @Test func usageErrorsExitWithTwo() throws {
        #expect(try SamlgateProcess.run(["verify", "x.xml"]).status == 2)
        #expect(try SamlgateProcess.run(["verify", "--trust-store", "/tmp", "x.xml"]).status == 2)
        #expect(try SamlgateProcess.run(["verify", "--trust", "/nonexistent.pem", "x.xml"]).status == 2)
        #expect(try SamlgateProcess.run(["verify", "--trust-store", "/tmp", "--mvpd", "m", "--allow-weak-keys", "x.xml"]).status == 2)
        #expect(try SamlgateProcess.run(["idp", "keygen", "--out", "/tmp/x", "--alg", "dsa"]).status == 2)
        #expect(
            try SamlgateProcess.run(["idp", "issue", "--key", "k", "--cert", "c", "--mvpd", "m", "--user", "u", "--attr", "novalue"]).status == 2)
    }
}

extension VerifyCommandTests {
    /// The verdict is on the response as the gateway forwards it (its cookbook normalization).
    @Test func verdictIsOnTheForwardedDocument() throws {
        let (_, key, cert) = try Self.keygen("rsa2048")
        let compact = try Self.issue(key, cert)
        let pretty = try Self.issue(key, cert, ["--pretty"])
        // A second NameID hidden in a comment that normalization opens (`-\n->`): the raw document
        // verifies (comments are not signed), its normalization holds two NameIDs.
        let genuine = try String(contentsOfFile: compact, encoding: .utf8)
        let hidden = "<!--x-\n-><saml:NameID>admin@victim.example</saml:NameID><!-\n-y-->"
        let smuggled = try SamlgateProcess.temporaryFile(
            "smuggled.xml", Data(genuine.replacingFirst("</saml:NameID>", with: "</saml:NameID>" + hidden).utf8))
        let result = try SamlgateProcess.run(["verify", "--trust", cert, "--no-replay-check", compact, pretty, smuggled])
        #expect(result.status == 1, "\(result.stdoutText) \(result.stderr)")
        let lines = try Self.lines(result)
        // The compact response changes only in the line break after its XML declaration.
        #expect(lines.map { $0["normalization"] as? String } == ["verified", "equivalent", nil])
        #expect(lines.map { $0["survivesNormalization"] as? Bool } == [true, false, nil])
        #expect(lines[1]["nameID"] as? String == "alice@example.com")
        #expect((lines[2]["error"] as? [String: Any])?["code"] as? String == "normalization_changes_document")
    }
}

extension VerifyCommandTests {
    /// An RSA-1024 key and its self-signed certificate: (key path, certificate path). Made with
    /// the `openssl` command line, since the test IdP makes no key a trust store would refuse.
    static func weakKeygen() throws -> (String, String) {
        let dir = TestScratch.directory("samlgate-weak-idp").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-days", "100",
            "-subj", "/CN=old test IdP",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return (dir + "/key.pem", dir + "/cert.pem")
    }

    /// A weak `--trust` key is refused as the trust store refuses one (`weak_key`, pointing at
    /// the flag); `--allow-weak-keys` admits it, as an `allow-weak-keys` file does, with a warning.
    @Test func weakTrustedKeyNeedsAllowWeakKeys() throws {
        let (key, cert) = try Self.weakKeygen()
        let file = try Self.issue(key, cert)
        let refused = try SamlgateProcess.run(["verify", "--trust", cert, file])
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("weak_key: \(cert): RSA-1024 key") && refused.stderr.contains("--allow-weak-keys"), "\(refused.stderr)")

        let admitted = try SamlgateProcess.run(["verify", "--allow-weak-keys", "--trust", cert, file])
        #expect(admitted.status == 0, "\(admitted.stdoutText) \(admitted.stderr)")
        let line = try #require(try Self.lines(admitted).first)
        #expect(line["valid"] as? Bool == true)
        #expect(line["nameID"] as? String == "alice@example.com")
        #expect(admitted.stderr.contains("\(cert): RSA-1024 key trusted because of --allow-weak-keys"), "\(admitted.stderr)")
    }
}
