import CLITestSupport
import Foundation
import Testing

/// Captures as Windows tools and browsers write them: a byte-order mark and a line break before
/// the XML, URLs that carry credentials and device ids.
@Suite("batch capture formats")
struct BatchCaptureFormatTests {
    static let bomAndLineBreak: [UInt8] = [0xEF, 0xBB, 0xBF, 0x0D, 0x0A]

    @Test("a byte-order mark, a line break, then the XML: raw XML, encoded exactly as samlgate encode does, in every reader")
    func byteOrderMarkThenLineBreak() throws {
        let fixture = try BatchFixture()
        // A compact response: its signature survives the cookbook's normalization, so the
        // normalized document (BOM kept, line break gone) verifies by itself.
        let document = Self.bomAndLineBreak + BatchFixture.responses[1]
        let file = try fixture.write("windows.xml", document)
        let encode = try SamlgateProcess.run(["encode", file])
        #expect(encode.status == 0, "\(encode.stderr)")
        let expected = String(encode.stdoutText.dropLast())

        let text = String(decoding: document, as: UTF8.self)
        let jsonl = try fixture.write(
            "windows.jsonl", BatchFixture.jsonLine(text) + "\n" + BatchFixture.jsonLine(BatchFixture.base64(document)) + "\n")
        let formValue = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let har = try fixture.write(
            "windows.har",
            #"{"log":{"entries":[{"request":{"method":"POST","url":"https://a/api/v1/tokens/authn","postData":{"text":"SAMLResponse=\#(formValue)"}}}]}}"#
        )
        let pem = try fixture.write("idp.pem", BatchFixture.keyPair.certificatePEM)
        let result = try fixture.batch([file, jsonl, har, "--verify", "--trust", pem])
        let records = BatchFixture.records(result)
        #expect(records.count == 4)
        #expect(records.map { $0["form"] as? String } == ["raw", "raw", "base64", "raw"])
        for record in records {
            #expect(BatchFixture.errorCode(record) == nil, "\(record)")
            #expect(record["encoded"] as? String == expected, "\(record["source"] ?? "")")
            #expect(record["valid"] as? Bool == true)
        }
    }

    @Test("HAR meta.url keeps neither user name and password nor path parameters")
    func harURLWithoutPersonalData() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.encoded(BatchFixture.responses[1])
        let urls = [
            "https://alice:s3cret@sp.example:8443/api/v1/tokens/authn;deviceId=ABCD-1234?requestor=REF#top",
            "https://sp.example/api/v2/REF;jsessionid=42/profiles/sso/apple;deviceId=ABCD-1234",
        ]
        let entries = urls.map { #"{"request":{"method":"POST","url":"\#($0)","postData":{"text":"SAMLResponse=\#(value)"}}}"# }
        let file = try fixture.write("private.har", #"{"log":{"entries":[\#(entries.joined(separator: ","))]}}"#)
        let result = try fixture.batch([file])
        let records = BatchFixture.records(result)
        #expect(
            records.map { ($0["meta"] as? [String: Any])?["url"] as? String } == [
                "https://sp.example:8443/api/v1/tokens/authn", "https://sp.example/api/v2/REF/profiles/sso/apple",
            ])
        for secret in ["alice", "s3cret", "ABCD-1234", "jsessionid"] { #expect(!result.stdoutText.contains(secret), "\(secret)") }

        // A request to an exchange path carrying no response is reported, path parameters or not.
        let empty = try fixture.write(
            "empty.har",
            #"{"log":{"entries":[{"request":{"method":"POST","url":"https://sp.example/api/v1/tokens/authn;deviceId=x","postData":{"text":"a=b"}}}]}}"#
        )
        #expect(BatchFixture.records(try fixture.batch([empty])).map(BatchFixture.errorCode) == ["missing_field"])
    }
}
