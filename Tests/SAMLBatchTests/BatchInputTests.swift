import CLITestSupport
import Foundation
import Testing

/// Every input kind through the real `samlgate batch`, each record compared byte for byte with
/// the cookbook encoding.
@Suite("batch inputs")
struct BatchInputTests {
    @Test("raw, base64 and encoded documents come out as the cookbook encoding, in argument order")
    func documents() throws {
        let fixture = try BatchFixture()
        let xml = BatchFixture.responses[0]
        let raw = try fixture.write("a.xml", xml)
        let b64 = try fixture.write("b.b64", BatchFixture.base64(xml) + "\n")
        let enc = try fixture.write("c.txt", BatchFixture.encoded(xml))
        let result = try fixture.batch([raw, b64, enc])
        #expect(result.status == 0, "\(result.stderr)")
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == [raw, b64, enc])
        #expect(records.map { $0["form"] as? String } == ["raw", "base64", "encoded"])
        for record in records {
            #expect(record["encoded"] as? String == BatchFixture.encoded(xml))
            #expect(record["error"] is NSNull)
            #expect(record["bytesOut"] as? Int == BatchFixture.encoded(xml).utf8.count)
        }
        #expect(records[0]["bytesIn"] as? Int == xml.count)
        #expect(result.stderr.contains("samlgate batch summary"))
        #expect(result.stderr.contains("records") && result.stderr.contains("3"))
    }

    @Test("a directory is read recursively in name order; --glob filters it")
    func directories() throws {
        let fixture = try BatchFixture()
        try fixture.write("d/b.xml", BatchFixture.responses[1])
        try fixture.write("d/a/z.xml", BatchFixture.responses[2])
        try fixture.write("d/notes.txt", "not a response")
        try fixture.write("d/.hidden.xml", BatchFixture.responses[3])
        let all = try fixture.batch([fixture.path("d")])
        #expect(
            BatchFixture.records(all).map { $0["source"] as? String } == [
                fixture.path("d/a/z.xml"), fixture.path("d/b.xml"), fixture.path("d/notes.txt"),
            ])
        let filtered = try fixture.batch([fixture.path("d"), "--glob", "*.xml"])
        #expect(filtered.status == 0, "\(filtered.stderr)")
        let records = BatchFixture.records(filtered)
        #expect(records.map { $0["source"] as? String } == [fixture.path("d/a/z.xml"), fixture.path("d/b.xml")])
        #expect(records[0]["encoded"] as? String == BatchFixture.encoded(BatchFixture.responses[2]))
    }

    @Test("JSON Lines: the field in any form, other fields carried under meta, :LINE in the source")
    func jsonLines() throws {
        let fixture = try BatchFixture()
        let xml = BatchFixture.responses
        let lines = [
            BatchFixture.jsonLine(String(decoding: xml[0], as: UTF8.self), ["id": 1, "mvpd": "Batch_MVPD"]),
            BatchFixture.jsonLine(BatchFixture.base64(xml[1]), ["id": "two", "tags": ["a", "b"], "n": NSNull()]),
            "",
            BatchFixture.jsonLine(BatchFixture.encoded(xml[2]), ["nested": ["deep": [1.5, true]]]),
            // Escaped slashes, as some JSON encoders write them.
            "{\"SAMLResponse\":\"\(BatchFixture.base64(xml[3]).replacingOccurrences(of: "/", with: "\\/"))\",\"id\":4}",
        ]
        let file = try fixture.write("captures.jsonl", lines.joined(separator: "\n") + "\n")
        let result = try fixture.batch([file])
        #expect(result.status == 0, "\(result.stderr)")
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(file):1", "\(file):2", "\(file):4", "\(file):5"])
        #expect(records.map { $0["form"] as? String } == ["raw", "base64", "encoded", "base64"])
        for (record, response) in zip(records, [xml[0], xml[1], xml[2], xml[3]]) {
            #expect(record["encoded"] as? String == BatchFixture.encoded(response))
        }
        let meta = records.map { $0["meta"] as? [String: Any] ?? [:] }
        #expect(meta[0]["id"] as? Int == 1 && meta[0]["mvpd"] as? String == "Batch_MVPD")
        #expect(meta[1]["tags"] as? [String] == ["a", "b"] && meta[1]["n"] is NSNull)
        #expect(((meta[2]["nested"] as? [String: Any])?["deep"] as? [Any])?.count == 2)
        #expect(meta[0]["SAMLResponse"] == nil)
    }

    @Test("--field names another JSON Lines field")
    func otherField() throws {
        let fixture = try BatchFixture()
        let line = "{\"id\":7,\"saml\":\"\(BatchFixture.base64(BatchFixture.responses[4]))\"}\n"
        let file = try fixture.write("x.ndjson", line)
        let result = try fixture.batch([file, "--field", "saml"])
        let records = BatchFixture.records(result)
        #expect(records.count == 1)
        #expect(records[0]["encoded"] as? String == BatchFixture.encoded(BatchFixture.responses[4]))
        #expect((records[0]["meta"] as? [String: Any])?["id"] as? Int == 7)
    }

    @Test("HAR: form bodies, params and query strings; URL without query, method and time carried; #N is the entry")
    func har() throws {
        let fixture = try BatchFixture()
        let xml = BatchFixture.responses
        let formValue = BatchFixture.encoded(xml[0])  // what an app posts: the cookbook value
        let entries: [[String: Any]] = [
            [
                "startedDateTime": "2026-11-01T10:00:00.000Z", "request": ["method": "GET", "url": "https://tv.example/app.js"],
                "response": ["status": 200, "content": ["text": "var s = \"SAMLResponse\"; // ]}"]],
            ],
            [
                "startedDateTime": "2026-11-01T10:00:01.000Z",
                "request": [
                    "method": "POST", "url": "https://api.auth.adobe.com/api/v1/tokens/authn?deviceId=secret-device",
                    "postData": [
                        "mimeType": "application/x-www-form-urlencoded",
                        "text": "requestor=NBC&deviceId=d1&mvpd=Batch_MVPD&deviceType=tvOS&SAMLResponse=\(formValue)",
                    ],
                ],
            ],
            [
                "startedDateTime": "2026-11-01T10:00:02.000Z",
                "request": [
                    "method": "POST", "url": "https://api.auth.adobe.com/api/v2/NBC/profiles/sso/apple",
                    "postData": [
                        "mimeType": "application/x-www-form-urlencoded",
                        "params": [["name": "SAMLResponse", "value": BatchFixture.base64(xml[1])]],
                    ],
                ],
            ],
            [
                "startedDateTime": "2026-11-01T10:00:03.000Z",
                "request": ["method": "GET", "url": "https://idp.example/sso?SAMLResponse=\(BatchFixture.encoded(xml[2]))&RelayState=x"],
            ],
        ]
        let har: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "test", "version": "1"], "pages": [], "entries": entries]]
        let data = try JSONSerialization.data(withJSONObject: har, options: [.prettyPrinted])
        let file = try fixture.write("session.har", [UInt8](data))
        let result = try fixture.batch([file])
        #expect(result.status == 0, "\(result.stderr)")
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(file)#2", "\(file)#3", "\(file)#4"])
        for (record, response) in zip(records, [xml[0], xml[1], xml[2]]) {
            #expect(record["encoded"] as? String == BatchFixture.encoded(response))
        }
        let meta = records[0]["meta"] as? [String: Any] ?? [:]
        #expect(meta["method"] as? String == "POST")
        #expect(meta["url"] as? String == "https://api.auth.adobe.com/api/v1/tokens/authn")
        #expect(meta["startedDateTime"] as? String == "2026-11-01T10:00:01.000Z")
        #expect(!result.stdoutText.contains("secret-device"))
    }

    @Test("gzip: compressed JSON Lines, HAR and documents, detected by content as well as by name")
    func gzip() throws {
        let fixture = try BatchFixture()
        let xml = BatchFixture.responses
        try fixture.write(
            "c.jsonl",
            [BatchFixture.jsonLine(BatchFixture.base64(xml[0])), BatchFixture.jsonLine(BatchFixture.base64(xml[1]))].joined(separator: "\n"))
        try fixture.write("doc.xml", xml[2])
        let jsonl = try fixture.gzip("c.jsonl")
        let doc = try fixture.gzip("doc.xml")
        // A gzip file whose name does not say so.
        let renamed = fixture.path("capture.bin")
        try FileManager.default.copyItem(atPath: doc, toPath: renamed)
        let result = try fixture.batch([jsonl, doc, renamed])
        #expect(result.status == 0, "\(result.stderr)")
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["\(jsonl):1", "\(jsonl):2", doc, renamed])
        #expect(records.map { $0["encoded"] as? String } == [xml[0], xml[1], xml[2], xml[2]].map(BatchFixture.encoded))
    }

    @Test("standard input with '-', mixed with files")
    func standardInput() throws {
        let fixture = try BatchFixture()
        let file = try fixture.write("a.xml", BatchFixture.responses[0])
        let lines = [BatchFixture.jsonLine(BatchFixture.base64(BatchFixture.responses[1]), ["id": 1])].joined() + "\n"
        let result = try fixture.batch(["-", file], stdin: Data(lines.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        let records = BatchFixture.records(result)
        #expect(records.map { $0["source"] as? String } == ["-:1", file])
        #expect(records[0]["encoded"] as? String == BatchFixture.encoded(BatchFixture.responses[1]))
    }
}
