import CLITestSupport
import Foundation
import Testing

/// JSON read the way every parser reads it: keys compared after unescaping, and a record that
/// repeats a key refused, so the trust a record is verified with and the `meta` it carries are
/// what anything reading the output sees.
@Suite("batch JSON keys")
struct BatchJSONKeyTests {
    @Test("JSON Lines: an escaped key is the key it spells; a repeated key (escaped or not, at any depth) is duplicate_key")
    func jsonLinesKeys() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.base64(BatchFixture.responses[0])
        let lines = [
            // mvpd twice, once escaped: verified with A's trust, read by everyone else as B.
            #"{"mvpd":"A","mvp\u0064":"B","SAMLResponse":"\#(value)"}"#,
            // The response under an escaped key is the response, not a carried field.
            #"{"id":2,"SAMLRespons\u0065":"\#(value)"}"#,
            #"{"SAMLResponse":"\#(value)","SAMLRespons\u0065":"\#(value)"}"#,
            #"{"SAMLResponse":"\#(value)","note":{"k":1,"\u006b":2}}"#,
            #"{"SAMLResponse":"\#(value)","id":1,"id":1}"#,
            #"{"SAMLResponse":"\#(value)","mvp\u0064":"\#(BatchFixture.mvpd)"}"#,
            // Equal but for case: a binder that ignores case reads either copy.
            #"{"mvpd":"A","MVPD":"B","SAMLResponse":"\#(value)"}"#,
            #"{"SAMLResponse":"\#(value)","note":{"Id":1,"i\u0044":2}}"#,
        ]
        let file = try fixture.write("keys.jsonl", lines.joined(separator: "\n") + "\n")
        let result = try fixture.batch([file])
        let records = BatchFixture.records(result)
        #expect(
            records.map(BatchFixture.errorCode) == [
                "duplicate_key", nil, "duplicate_key", "duplicate_key", "duplicate_key", nil, "duplicate_key", "duplicate_key",
            ])
        #expect(records[1]["encoded"] as? String == BatchFixture.encoded(BatchFixture.responses[0]))
        #expect((records[1]["meta"] as? [String: Any])?.keys.sorted() == ["id"])
        #expect(result.stderr.contains("\(file):1: duplicate_key"))
    }

    @Test("JSON Lines: an escaped mvpd key picks the trust, as it reads in meta")
    func escapedMVPDPicksTheTrust() throws {
        let fixture = try BatchFixture()
        try fixture.write("trust/\(BatchFixture.mvpd)/idp.pem", BatchFixture.keyPair.certificatePEM)
        try fixture.write("trust/Other/idp.pem", BatchFixture.keyPair.certificatePEM)
        // One key for two MVPDs: each needs an issuer binding (the trust store refuses it otherwise).
        try fixture.write("trust/\(BatchFixture.mvpd)/issuer", "https://idp.batch_mvpd.example.com/saml2/idp")
        try fixture.write("trust/Other/issuer", "https://idp.other.example.com/saml2/idp")
        let value = BatchFixture.base64(BatchFixture.responses[0])
        let file = try fixture.write("v.jsonl", #"{"SAMLResponse":"\#(value)","mvp\u0064":"\#(BatchFixture.mvpd)"}"# + "\n")
        let result = try fixture.batch([file, "--verify", "--trust-store", fixture.path("trust")])
        let record = try #require(BatchFixture.records(result).first)
        #expect(record["valid"] as? Bool == true, "\(record)")
        #expect((record["meta"] as? [String: Any])?["mvpd"] as? String == BatchFixture.mvpd)
    }

    @Test("HAR: a second log, an escaped log, a repeated key in an entry, a form repeating SAMLResponse")
    func harKeys() throws {
        let fixture = try BatchFixture()
        let value = BatchFixture.encoded(BatchFixture.responses[1])
        func entry(_ body: String, url: String = "https://a/api/v1/tokens/authn") -> String {
            #"{"request":{"method":"POST","url":"\#(url)","postData":{"text":"\#(body)"}}}"#
        }
        let twoLogs = try fixture.write(
            "two.har", #"{"log":{"entries":[\#(entry("SAMLResponse=\(value)"))]},"log":{"entries":[\#(entry("SAMLResponse=\(value)"))]}}"#)
        let escapedLog = try fixture.write("escaped.har", #"{"\u006cog":{"entri\u0065s":[\#(entry("SAMLResponse=\(value)"))]}}"#)
        let repeatedURL = try fixture.write(
            "url.har",
            #"{"log":{"entries":[{"request":{"method":"POST","url":"https://a/x","url":"https://a/api/v1/tokens/authn","postData":{"text":"SAMLResponse=\#(value)"}}}]}}"#
        )
        let repeatedField = try fixture.write(
            "form.har", #"{"log":{"entries":[\#(entry("SAMLResponse=\(value)&mvpd=A&MVPD=B")),\#(entry("SAML%52esponse=\(value)"))]}}"#)
        let result = try fixture.batch([twoLogs, escapedLog, repeatedURL, repeatedField])
        let records = BatchFixture.records(result)
        #expect(
            records.map { $0["source"] as? String } == [
                "\(twoLogs)#1", "\(twoLogs)#2", "\(escapedLog)#1", "\(repeatedURL)#1", "\(repeatedField)#1", "\(repeatedField)#2",
            ])
        #expect(records.map(BatchFixture.errorCode) == [nil, "duplicate_key", nil, "duplicate_key", "duplicate_key", nil])
        #expect(records[2]["encoded"] as? String == value)
        #expect(records[5]["encoded"] as? String == value, "a form field name is read decoded")
    }
}
