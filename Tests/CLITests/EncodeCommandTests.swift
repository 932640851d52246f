import CLITestSupport
import CookbookReference
import Foundation
import Testing

/// `samlgate encode` and `samlgate decode` through the real executable.
@Suite struct EncodeCommandTests {
    static let tricky = "\u{FEFF}<r>\r\n  <a b=\"x+y\">Grüße\u{2028}</a>\t \n\u{A0}</r>\u{3000}\n"

    @Test func encodeOutputIsTheCookbookPlusOneNewline() throws {
        let path = try SamlgateProcess.temporaryFile("r.xml", Data(Self.tricky.utf8))
        let result = try SamlgateProcess.run(["encode", path])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutText == CookbookReference.encode(Self.tricky) + "\n")
    }

    @Test func stagesAndStandardInput() throws {
        let input = Data(Self.tricky.utf8)
        #expect(
            try SamlgateProcess.run(["encode", "--stage", "normalized"], stdin: input).stdoutText
                == CookbookReference.normalize(Self.tricky) + "\n")
        #expect(
            try SamlgateProcess.run(["encode", "--stage", "base64", "-"], stdin: input).stdoutText
                == Data(CookbookReference.normalize(Self.tricky).utf8).base64EncodedString() + "\n")
    }

    @Test func emptyInputGivesAnEmptyLine() throws {
        let result = try SamlgateProcess.run(["encode"], stdin: Data(" \n\t".utf8))
        #expect(result.status == 0)
        #expect(result.stdoutText == "\n")
    }

    @Test func aBadFileIsReportedAndTheOthersStillProcessed() throws {
        let good = try SamlgateProcess.temporaryFile("good.xml", Data("<a/>".utf8))
        let bad = try SamlgateProcess.temporaryFile("bad.xml", Data([0x3C, 0x61, 0x3E, 0xC3, 0x28]))
        let missing = good + ".missing"
        let result = try SamlgateProcess.run(["encode", good, bad, missing, good])
        #expect(result.status == 1)
        #expect(result.stdoutText == "PGEvPg%3D%3D\nPGEvPg%3D%3D\n")
        #expect(result.stderr.contains("samlgate: \(bad): invalid_utf8: byte 0xC3 at offset 3"))
        #expect(result.stderr.contains("samlgate: \(missing): unreadable_input: No such file or directory"))
    }

    @Test func usageErrorsExitWithTwo() throws {
        #expect(try SamlgateProcess.run(["encode", "--stage", "gzip"]).status == 2)
        #expect(try SamlgateProcess.run(["encode", "--stage", "base64", "--detect"]).status == 2)
        #expect(try SamlgateProcess.run(["frobnicate"]).status == 2)
    }

    @Test func detectNeverEncodesTwice() throws {
        let expected = CookbookReference.encode(Self.tricky)
        let raw = try SamlgateProcess.temporaryFile("raw.xml", Data(Self.tricky.utf8))
        let encoded = try SamlgateProcess.temporaryFile("enc.txt", Data((expected + "\n").utf8))
        let base64 = try SamlgateProcess.temporaryFile("b64.txt", Data(Data(Self.tricky.utf8).base64EncodedString().utf8))
        let result = try SamlgateProcess.run(["encode", "--detect", raw, encoded, base64])
        #expect(result.status == 0)
        #expect(result.stdoutText == String(repeating: expected + "\n", count: 3))
    }

    @Test func decodeRoundTripsAndReportsErrors() throws {
        let encoded = try SamlgateProcess.temporaryFile("e.txt", Data((CookbookReference.encode(Self.tricky) + "\n").utf8))
        let badPercent = try SamlgateProcess.temporaryFile("p.txt", Data("PGEv%2".utf8))
        let badBase64 = try SamlgateProcess.temporaryFile("b.txt", Data("PGEv*g==".utf8))
        let result = try SamlgateProcess.run(["decode", encoded, badPercent, badBase64])
        #expect(result.status == 1)
        #expect(result.stdoutText == CookbookReference.normalize(Self.tricky) + "\n")
        #expect(result.stderr.contains("samlgate: \(badPercent): malformed_percent_encoding:"))
        #expect(result.stderr.contains("samlgate: \(badBase64): malformed_base64:"))
    }

    @Test func oneMegabyteInput() throws {
        let line = "  <saml:AttributeValue>\tvalue+/= ü</saml:AttributeValue>\r\n"
        let text = "<r>\n" + String(repeating: line, count: 1_048_576 / line.utf8.count) + "</r>\n"
        let path = try SamlgateProcess.temporaryFile("big.xml", Data(text.utf8))
        let result = try SamlgateProcess.run(["encode", path])
        #expect(result.status == 0)
        #expect(result.stdoutText == CookbookReference.encode(text) + "\n")
    }
}
